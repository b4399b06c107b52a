//! Counts in words that agree with their numbers, for every sentence a model or the page writes:
//! "once", not "1 times"; "1 member", not "1 member(s)".

/// How often something happened: `once`, `twice`, `3 times`.
pub fn times(n: u64) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// `n` with its noun in the form the number takes: `1 member`, `0 members`, `3 members`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_numbers() {
        assert_eq!([times(1), times(2), times(3), times(0)], ["once", "twice", "3 times", "0 times"]);
        assert_eq!([count(1, "member", "members"), count(0, "member", "members")], ["1 member", "0 members"]);
    }
}
