//! The memory budget every model keeps: each world estimates what it holds as it runs and, past
//! its budget, stops at that instant with a log entry, a warning and a line in its report naming
//! the budget and the size reached, instead of exhausting the browser tab (or the machine).

use super::Millis;

/// 1.5 GB: a browser tab's wasm memory tops out at 2-4 GB, and the page needs room of its own.
pub const DEFAULT_MEMORY_BUDGET: u64 = 1_500_000_000;

/// The largest `memoryBudgetMb` a scenario may ask for.
pub const MAX_MEMORY_BUDGET_MB: u64 = 1_000_000;

/// A world checks its estimate every this many steps: cheap next to the steps themselves.
pub const CHECK_EVERY: u64 = 1024;

/// The budget in bytes a scenario's `memoryBudgetMb` asks for.
pub fn budget_bytes(memory_budget_mb: Option<u64>) -> u64 {
    memory_budget_mb.map_or(DEFAULT_MEMORY_BUDGET, |mb| mb.saturating_mul(1_000_000))
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetStop {
    pub at: Millis,
    pub budget: u64,
    pub reached: u64,
}

impl BudgetStop {
    pub fn message(&self) -> String {
        format!(
            "the run stopped at t={}: the model held {} (its own estimate), over its memory budget of {}",
            self.at,
            mb(self.reached),
            mb(self.budget)
        )
    }
}

pub fn mb(bytes: u64) -> String {
    format!("{} MB", super::decimal::fixed(bytes as f64 / 1e6, 1))
}
