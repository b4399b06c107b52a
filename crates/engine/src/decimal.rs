//! Decimal numbers as text, for the few places that print or read a fraction (a speed, a clock
//! in seconds, an axis label), without `core`'s float formatting and parsing: the page prints
//! and reads no other floats, so its first download carries neither (about 9 KB gzipped). A
//! fraction is printed by rounding it to an integer count of its last digit, and read as an
//! integer divided by a power of ten: both exact for the short decimals these places use.

/// `x` with `decimals` digits after the point, rounded half away from zero: `format!("{x:.1}")`
/// for `fixed(x, 1)` (which rounds an exact tie to even; no caller prints a tie).
pub fn fixed(x: f64, decimals: u32) -> String {
    let scale = 10u64.pow(decimals.min(9));
    let scaled = (x.abs() * scale as f64).round();
    if !scaled.is_finite() || scaled >= 1e18 {
        // Far outside what the page prints; an approximation keeps it panic-free.
        return if x.is_nan() { "NaN".into() } else { format!("{}{}", if x < 0.0 { "-" } else { "" }, scaled.min(1e18) as u64) };
    }
    let n = scaled as u64;
    let sign = if x < 0.0 && n > 0 { "-" } else { "" };
    match decimals {
        0 => format!("{sign}{n}"),
        d => format!("{sign}{}.{:0width$}", n / scale, n % scale, width = d.min(9) as usize),
    }
}

/// `fixed` without the trailing zeros (and point): what `{}` prints for a float that was
/// rounded to `decimals` places (`2.5`, `10`, `0.125`).
pub fn trimmed(x: f64, decimals: u32) -> String {
    let s = fixed(x, decimals);
    if !s.contains('.') {
        return s;
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A plain decimal (`-1.5`, `10`, `.25`, `2.`): an optional sign, digits and at most one point,
/// no exponent. Digits past the eighteenth significant one are ignored.
pub fn parse(text: &str) -> Option<f64> {
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mut mantissa, mut digits, mut scale, mut seen_point, mut any) = (0u64, 0u32, 0i32, false, false);
    for b in body.bytes() {
        match b {
            b'.' if !seen_point => seen_point = true,
            b'0'..=b'9' => {
                any = true;
                if digits < 18 {
                    mantissa = mantissa * 10 + u64::from(b - b'0');
                    if mantissa > 0 {
                        digits += 1;
                    }
                    scale += i32::from(seen_point);
                } else if !seen_point {
                    scale -= 1;
                }
            }
            _ => return None,
        }
    }
    if !any {
        return None;
    }
    // Both operands exact (mantissa < 2^53 for the short decimals read here, 10^k for k <= 22),
    // and IEEE division rounds correctly: the same double `str::parse` gives.
    let value = if scale >= 0 { mantissa as f64 / 10f64.powi(scale) } else { mantissa as f64 * 10f64.powi(-scale) };
    Some(if negative { -value } else { value })
}

/// `x.clamp(lo, hi)` without its panic on `lo > hi` (which prints both floats); NaN becomes `lo`.
pub fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    x.max(lo).min(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_matches_core_away_from_ties() {
        for x in [0.0, 1.0, 2.51, 3.17159, 99.95001, 1234.5678, 0.04, 59.999, 1e-9, 123456.0, -2.25001, -0.7] {
            for d in 0..=4 {
                assert_eq!(fixed(x, d), format!("{x:.*}", d as usize), "{x} to {d}");
            }
        }
        assert_eq!(fixed(-0.04, 1), "0.0", "no negative zero");
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert!(!fixed(f64::INFINITY, 1).is_empty());
        assert_eq!(fixed(1e300, 1), "1000000000000000000");
    }

    #[test]
    fn trimmed_matches_display_of_rounded_values() {
        for x in [2.5, 10.0, 0.125, 1.0 / 3.0, 100.0, 0.01, 0.3, 7.1] {
            for d in [1, 3] {
                let p = 10f64.powi(d as i32);
                let rounded = (x * p).round() / p;
                assert_eq!(trimmed(x, d), format!("{rounded}"), "{x} to {d}");
            }
        }
    }

    #[test]
    fn parse_matches_core_on_plain_decimals() {
        for s in ["0", "10", "2.5", "-1.3", "+0.25", ".5", "5.", "0.001", "100", "-2", "0.30000000000000004", "1234567.891"] {
            assert_eq!(parse(s), s.parse::<f64>().ok(), "{s}");
        }
        for s in ["", "-", ".", "1e3", "NaN", "inf", "1.2.3", "1,5", " 1", "--1"] {
            assert_eq!(parse(s), None, "{s:?}");
        }
        assert!(parse(&format!("1{}", "0".repeat(40))).is_some_and(|v| (v / 1e40 - 1.0).abs() < 1e-12));
        assert!(
            parse(&format!("0.{}1", "0".repeat(40))).is_some_and(|v| (v / 1e-41 - 1.0).abs() < 1e-12),
            "leading zeros are not digits"
        );
        assert_eq!(parse(&format!("1.{}9", "0".repeat(30))), Some(1.0), "past 18 digits is ignored");
    }

    #[test]
    fn clamp_is_clamp_for_numbers() {
        assert_eq!(clamp(5.0, 0.0, 1.0), 1.0);
        assert_eq!(clamp(-5.0, 0.0, 1.0), 0.0);
        assert_eq!(clamp(0.5, 0.0, 1.0), 0.5);
        assert_eq!(clamp(f64::NAN, 0.0, 1.0), 0.0);
    }
}
