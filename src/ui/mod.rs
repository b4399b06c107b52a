//! UI (in progress)
