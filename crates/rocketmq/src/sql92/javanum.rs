//! Java's `Integer.valueOf`, `Long.valueOf`, `Double.valueOf` and `Boolean.valueOf` on Strings, as
//! the filter's per-comparison conversion applies them, and Java's `Double.compare` order.
//!
//! Written from the documented Java behaviour (JDK 8-21), not from JDK code:
//! - `Integer/Long.parseLong`: optional `+`/`-`, then at least one digit; a digit is any BMP character
//!   that Java's `Character.digit(c, 10)` accepts (Unicode category Nd, e.g. Arabic-Indic or
//!   full-width digits). No whitespace, no `_`, no suffix; overflow is an error.
//! - `Double.valueOf`: trims characters `<= U+0020` at both ends; `[+-]` then `NaN`, `Infinity`, a
//!   hexadecimal float (`0x1.8p1`, exponent required), or ASCII decimal digits with at most one `.`
//!   and an optional exponent; one optional trailing `f`/`F`/`d`/`D`. Correctly rounded.
//! - `Boolean.valueOf`: true exactly when the text equals `"true"` ignoring case.

/// Why a Java number conversion failed (Java throws `NumberFormatException`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumError {
    /// `For input string: "<text>"`.
    Format,
    /// `Double.valueOf("")` (after trimming): `empty String`.
    Empty,
}

/// First code point of each run of ten BMP digits that `Character.digit(c, 10)` accepts
/// (Unicode general category Nd inside the Basic Multilingual Plane).
const DIGIT_ZEROS: [u32; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50,
    0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
    0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
];

/// Java `Character.digit(c, 10)` for one UTF-16 unit. Characters outside the BMP occupy two
/// surrogate units in Java, and surrogates are never digits.
fn java_digit(c: char) -> Option<i64> {
    let cp = c as u32;
    if c.is_ascii_digit() {
        return Some(i64::from(cp - 0x30));
    }
    if !(0x0660..=0xFFFF).contains(&cp) {
        return None;
    }
    // DIGIT_ZEROS is sorted: find the last zero <= cp.
    let idx = DIGIT_ZEROS.partition_point(|&z| z <= cp);
    let zero = DIGIT_ZEROS[idx.checked_sub(1)?];
    (cp - zero < 10).then(|| i64::from(cp - zero))
}

/// Java's `parseInt`/`parseLong` algorithm (radix 10), accumulating negatively as Java does.
fn parse_java_integer(s: &str, min: i64, max: i64) -> Result<i64, NumError> {
    let mut chars = s.chars().peekable();
    let first = *chars.peek().ok_or(NumError::Format)?;
    let mut negative = false;
    let mut limit = -max;
    if first < '0' {
        if first == '-' {
            negative = true;
            limit = min;
        } else if first != '+' {
            return Err(NumError::Format);
        }
        chars.next();
        if chars.peek().is_none() {
            return Err(NumError::Format);
        }
    }
    let multmin = limit / 10;
    let mut result: i64 = 0;
    for c in chars {
        let digit = java_digit(c).ok_or(NumError::Format)?;
        if result < multmin {
            return Err(NumError::Format);
        }
        result *= 10;
        if result < limit + digit {
            return Err(NumError::Format);
        }
        result -= digit;
    }
    Ok(if negative { result } else { -result })
}

/// Java `Integer.valueOf(String)`.
pub(crate) fn parse_int(s: &str) -> Result<i32, NumError> {
    // The range check above keeps the value inside i32.
    parse_java_integer(s, i64::from(i32::MIN), i64::from(i32::MAX)).map(|v| v as i32)
}

/// Java `Long.valueOf(String)`.
pub(crate) fn parse_long(s: &str) -> Result<i64, NumError> {
    parse_java_integer(s, i64::MIN, i64::MAX)
}

/// Java `Boolean.valueOf(String)`: `"true".equalsIgnoreCase(s)`. No non-ASCII character folds to
/// one of the letters of "true", so an ASCII comparison is exact.
pub(crate) fn parse_bool(s: &str) -> bool {
    s.eq_ignore_ascii_case("true")
}

/// Java `Double.valueOf(String)`.
pub(crate) fn parse_double(s: &str) -> Result<f64, NumError> {
    let t = s.trim_matches(|c: char| c <= '\u{20}');
    if t.is_empty() {
        return Err(NumError::Empty);
    }
    let b = t.as_bytes();
    let mut i = 0;
    let mut negative = false;
    match b[0] {
        b'-' => {
            negative = true;
            i = 1;
        }
        b'+' => i = 1,
        _ => {}
    }
    if i >= b.len() {
        return Err(NumError::Format);
    }
    match b[i] {
        b'N' => return if &t[i..] == "NaN" { Ok(f64::NAN) } else { Err(NumError::Format) },
        b'I' => {
            return if &t[i..] == "Infinity" {
                Ok(if negative { f64::NEG_INFINITY } else { f64::INFINITY })
            } else {
                Err(NumError::Format)
            }
        }
        b'0' if i + 1 < b.len() && (b[i + 1] == b'x' || b[i + 1] == b'X') => {
            return parse_hex_double(&t[i + 2..], negative);
        }
        _ => {}
    }
    let mut digits = 0usize;
    let mut seen_point = false;
    while i < b.len() {
        match b[i] {
            b'0'..=b'9' => digits += 1,
            b'.' if !seen_point => seen_point = true,
            b'.' => return Err(NumError::Format),
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return Err(NumError::Format);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return Err(NumError::Format);
        }
    }
    let end = i;
    if i < b.len() && (i != b.len() - 1 || !matches!(b[i], b'f' | b'F' | b'd' | b'D')) {
        return Err(NumError::Format);
    }
    // The validated text (sign, digits, one optional point, optional exponent) is also valid and
    // correctly rounded for Rust's parser; no allocation needed.
    t[..end].parse::<f64>().map_err(|_| NumError::Format)
}

/// The part of a Java hexadecimal float after `0x`:
/// `(hex+ '.'? | hex* '.' hex+) [pP] [+-]? digit+ [fFdD]?`.
fn parse_hex_double(rest: &str, negative: bool) -> Result<f64, NumError> {
    let b = rest.as_bytes();
    let mut i = 0;
    // Significand: keep up to 30 significant hex digits (120 bits), the rest only as a sticky bit.
    let mut mant: u128 = 0;
    let mut kept = 0u32;
    let mut sticky = false;
    let mut dropped: i64 = 0; // significant digits left of the point that did not fit
    let mut frac_digits: i64 = 0; // digits right of the point that were kept
    let mut any_digit = false;
    let mut seen_point = false;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if seen_point {
                return Err(NumError::Format);
            }
            seen_point = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else { break };
        any_digit = true;
        if mant == 0 && d == 0 {
            // Leading zero: contributes nothing but its place value.
            if seen_point {
                frac_digits = frac_digits.saturating_add(1);
            }
        } else if kept < 30 {
            mant = (mant << 4) | u128::from(d);
            kept += 1;
            if seen_point {
                frac_digits = frac_digits.saturating_add(1);
            }
        } else {
            sticky |= d != 0;
            if !seen_point {
                dropped = dropped.saturating_add(1);
            }
        }
        i += 1;
    }
    if !any_digit || i >= b.len() || (b[i] != b'p' && b[i] != b'P') {
        return Err(NumError::Format);
    }
    i += 1;
    let mut exp_negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        exp_negative = b[i] == b'-';
        i += 1;
    }
    let exp_start = i;
    let mut exp: i64 = 0;
    let mut exp_overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        exp = exp * 10 + i64::from(b[i] - b'0');
        if exp > i64::from(i32::MAX) {
            exp_overflow = true;
            exp = i64::from(i32::MAX);
        }
        i += 1;
    }
    if i == exp_start {
        return Err(NumError::Format);
    }
    if i < b.len() && (i != b.len() - 1 || !matches!(b[i], b'f' | b'F' | b'd' | b'D')) {
        return Err(NumError::Format);
    }
    let signed = |v: f64| if negative { -v } else { v };
    if mant == 0 {
        return Ok(signed(0.0));
    }
    if exp_overflow {
        // Java: an exponent beyond int range gives infinity or zero by the exponent's sign.
        return Ok(signed(if exp_negative { 0.0 } else { f64::INFINITY }));
    }
    let exp = if exp_negative { -exp } else { exp };
    let exp2 = exp.saturating_add(dropped.saturating_mul(4)).saturating_sub(frac_digits.saturating_mul(4));
    Ok(signed(round_to_f64(mant, sticky, exp2)))
}

/// `(mant + sticky fraction) * 2^exp2`, rounded to the nearest double (ties to even), with
/// subnormals, overflow to infinity and underflow to zero. `mant` must be non-zero.
fn round_to_f64(mant: u128, sticky: bool, exp2: i64) -> f64 {
    let bits = i64::from(128 - mant.leading_zeros());
    // Exponent of the leading bit.
    let e = exp2.saturating_add(bits - 1);
    if e > 1023 {
        return f64::INFINITY;
    }
    if e < -1075 {
        return 0.0;
    }
    // Significant bits the result can hold at this magnitude.
    let precision = if e >= -1022 { 53 } else { e + 1075 };
    let shift = bits - precision;
    let mut q: u128;
    if shift > 0 {
        let shift = shift as u32;
        q = mant.checked_shr(shift).unwrap_or(0);
        let rem = if shift >= 128 { mant } else { mant & ((1u128 << shift) - 1) };
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && (sticky || q & 1 == 1)) {
            q += 1;
        }
    } else {
        q = mant << ((-shift) as u32);
    }
    // q now holds `precision` bits (or precision + 1 after a carry).
    let mut e = e;
    if precision == 53 {
        if q == 1u128 << 53 {
            q >>= 1;
            e += 1;
        }
        if e > 1023 {
            return f64::INFINITY;
        }
        let biased = (e + 1023) as u64;
        f64::from_bits((biased << 52) | (q as u64 & ((1u64 << 52) - 1)))
    } else {
        // Subnormal: the bit pattern is the significand itself (a carry into bit 52 correctly
        // produces the smallest normal number).
        f64::from_bits(q as u64)
    }
}

/// Java `Double.compare` (and `Double.compareTo`): numeric order, `-0.0 < 0.0`, NaN above
/// everything and equal to itself.
pub(crate) fn double_compare(a: f64, b: f64) -> i32 {
    if a < b {
        return -1;
    }
    if a > b {
        return 1;
    }
    let canon = |v: f64| if v.is_nan() { 0x7ff8_0000_0000_0000_i64 } else { v.to_bits() as i64 };
    let (x, y) = (canon(a), canon(b));
    (x > y) as i32 - (x < y) as i32
}

/// Java `Double.equals`: equal bit patterns after NaN canonicalisation.
pub(crate) fn double_equals(a: f64, b: f64) -> bool {
    double_compare(a, b) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_parsing_follows_java() {
        assert_eq!(parse_int("6"), Ok(6));
        assert_eq!(parse_int("-2147483648"), Ok(i32::MIN));
        assert_eq!(parse_int("+2147483647"), Ok(i32::MAX));
        assert_eq!(parse_int("007"), Ok(7));
        for bad in ["2147483648", "-2147483649", "6.5", " 6", "6 ", "", "+", "-", "1e3", "0x1F", "1_0"] {
            assert_eq!(parse_int(bad), Err(NumError::Format), "{bad:?}");
        }
        // Character.digit accepts any Unicode decimal digit in the BMP.
        assert_eq!(parse_int("\u{0663}\u{0664}"), Ok(34)); // Arabic-Indic 3, 4
        assert_eq!(parse_int("\u{FF11}\u{FF12}"), Ok(12)); // full-width 1, 2
        assert_eq!(parse_int("\u{1D7CF}"), Err(NumError::Format)); // supplementary: surrogates
        assert_eq!(parse_long("99999999999"), Ok(99_999_999_999));
        assert_eq!(parse_long("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_long("9223372036854775808"), Err(NumError::Format));
    }

    #[test]
    fn double_parsing_follows_java() {
        let ok = |s: &str, v: f64| assert_eq!(parse_double(s).map(f64::to_bits), Ok(v.to_bits()), "{s:?}");
        ok("3.5", 3.5);
        ok(" 6\t", 6.0);
        ok("1e3", 1000.0);
        ok("1E+3", 1000.0);
        ok("5.", 5.0);
        ok(".5", 0.5);
        ok("-0", -0.0);
        ok("1.5f", 1.5);
        ok("2D", 2.0);
        ok("+7", 7.0);
        ok("Infinity", f64::INFINITY);
        ok("-Infinity", f64::NEG_INFINITY);
        ok("1e400", f64::INFINITY);
        ok("1e-400", 0.0);
        ok("1e99999999999999999999", f64::INFINITY);
        ok("0e99999999999999999999", 0.0);
        ok("0x1p3", 8.0);
        ok("0x1.8p1", 3.0);
        ok("-0X.8P0d", -0.5);
        ok("0x1p-1074", f64::from_bits(1));
        ok("0x1p-1075", 0.0); // exactly half the smallest subnormal: ties to even
        ok("0x1.8p-1075", f64::from_bits(1));
        ok("0x1.fffffffffffff8p0", 2.0); // tie rounds up to even
        ok("0x1.fffffffffffff7p0", f64::from_bits(0x3FFF_FFFF_FFFF_FFFF));
        ok("0x1p1024", f64::INFINITY);
        ok("0x1p99999999999", f64::INFINITY);
        ok("0x1p-99999999999", 0.0);
        ok("0x0p99999999999", 0.0);
        ok("0x000000000000000000000000000000000001p0", 1.0);
        ok("0x1000000000000000000000000000000000p-132", 1.0);
        assert!(parse_double("NaN").unwrap().is_nan());
        assert!(parse_double("-NaN").unwrap().is_nan());
        assert_eq!(parse_double(""), Err(NumError::Empty));
        assert_eq!(parse_double("   "), Err(NumError::Empty));
        for bad in [
            "abc",
            "1..2",
            ".",
            "e3",
            "1e",
            "1e+",
            "1.5ff",
            "nan",
            "inf",
            "0x",
            "0x1",
            "0x1.p",
            "0x.p1",
            "1,5",
            "\u{0663}",
            "+",
            "-",
            "1 2",
            "NaNx",
            "Infinityf",
        ] {
            assert_eq!(parse_double(bad), Err(NumError::Format), "{bad:?}");
        }
    }

    #[test]
    fn bool_and_compare() {
        assert!(parse_bool("TrUe"));
        assert!(!parse_bool("yes"));
        assert!(!parse_bool(" true"));
        assert_eq!(double_compare(-0.0, 0.0), -1);
        assert_eq!(double_compare(f64::NAN, f64::INFINITY), 1);
        assert_eq!(double_compare(f64::NAN, -f64::NAN), 0);
        assert!(double_equals(f64::NAN, f64::NAN));
        assert!(!double_equals(0.0, -0.0));
    }
}
