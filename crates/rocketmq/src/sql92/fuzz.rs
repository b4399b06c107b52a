//! Deterministic fuzzing of `compile` + `evaluate`: grammar-shaped random expressions, mutated
//! ones (deleted/inserted/duplicated text, odd characters), pathological nesting and long chains,
//! evaluated against random String and typed properties.

use mqviz_engine::vec_map::VecMap;

use mqviz_engine::SplitMix64;

use super::{compile, PropValue, Sql92Version, Verdict, MAX_AST_HEIGHT, MAX_NESTING_DEPTH};

const NAMES: &[&str] = &["a", "b", "c", "TAGS", "A", "_x$1", "contains", "now", "KEYS"];
const STRINGS: &[&str] = &["''", "'x'", "'x''y'", "'TagA'", "'1'", "'true'", "' 5'", "'é🎉'", "'3.5'", "''''"];
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "5",
    "10L",
    "007",
    "2147483647",
    "2147483648",
    "99999999999",
    "9223372036854775807",
    "9223372036854775808",
    "1.5",
    "0.0",
    "1e400",
    ".5",
    "5.",
    "1e-400",
    "3e-324",
    "1.5E2",
    "0x1F",
    "7.9",
];
const VALUES: &[&str] = &[
    "",
    "1",
    "-2",
    "3.5",
    " 5",
    "1e3",
    "NaN",
    "-Infinity",
    "0x1p3",
    "true",
    "TRUE",
    "abc",
    "99999999999",
    "2147483648",
    "-0",
    "\u{0661}\u{0662}",
    "1d",
    "5.",
    ".5",
    "+7",
    "x'y",
    "TagA",
    "x",
    "0.0",
    "10",
];
const SNIPPETS: &[&str] = &[
    "'",
    "\"",
    "(",
    ")",
    "--",
    "/*",
    "*/",
    "\n",
    ".",
    "NOT ",
    " AND ",
    " OR ",
    " IS ",
    " IN (",
    ",",
    "é",
    "🎉",
    "\u{0}",
    "1e",
    "0x",
    "-",
    "+",
    "=",
    "<",
    ">",
    " BETWEEN ",
    ";",
    "|",
    "$",
    "_",
    " ",
    "''",
    "\r\n",
    "\u{FEFF}",
];
const CMP: &[&str] = &[" > ", " >= ", " < ", " <= ", " = ", " <> ", "=", "<>"];

fn keyword(rng: &mut SplitMix64, kw: &str) -> String {
    match rng.index(4) {
        0 => kw.to_ascii_lowercase(),
        1 => kw.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_lowercase() } else { c }).collect(),
        _ => kw.to_string(),
    }
}

fn operand(rng: &mut SplitMix64, depth: usize, out: &mut String) {
    match rng.index(12) {
        0..=3 => out.push_str(rng.pick(NAMES)),
        4 | 5 => out.push_str(rng.pick(STRINGS)),
        6..=8 => out.push_str(rng.pick(NUMBERS)),
        9 => {
            let kw = rng.pick(&["TRUE", "FALSE", "NULL"]);
            out.push_str(&keyword(rng, kw));
        }
        10 => {
            out.push_str(rng.pick(&["-", "+", "- ", "+ "]));
            operand(rng, depth + 1, out);
        }
        _ => {
            if depth < 4 {
                out.push('(');
                boolean(rng, depth + 1, out);
                out.push(')');
            } else {
                out.push_str(rng.pick(NAMES));
            }
        }
    }
}

fn boolean(rng: &mut SplitMix64, depth: usize, out: &mut String) {
    let choice = if depth >= 4 { rng.index(6) } else { rng.index(11) };
    match choice {
        0 | 1 => {
            operand(rng, depth, out);
            out.push_str(rng.pick(CMP));
            operand(rng, depth, out);
        }
        2 => {
            operand(rng, depth, out);
            out.push(' ');
            let kw = rng.pick(&["IS NULL", "IS NOT NULL", "IS", "IS NOT"]);
            out.push_str(&keyword(rng, kw));
        }
        3 => {
            operand(rng, depth, out);
            out.push(' ');
            if rng.one_in(3) {
                out.push_str(&keyword(rng, "NOT "));
            }
            out.push_str(&keyword(rng, "BETWEEN "));
            operand(rng, depth, out);
            out.push(' ');
            out.push_str(&keyword(rng, "AND "));
            operand(rng, depth, out);
        }
        4 => {
            out.push_str(rng.pick(NAMES));
            out.push(' ');
            if rng.one_in(3) {
                out.push_str(&keyword(rng, "NOT "));
            }
            out.push_str(&keyword(rng, "IN"));
            out.push_str(" (");
            for i in 0..=rng.index(6) {
                if i > 0 {
                    out.push_str(", ");
                }
                if rng.one_in(10) {
                    out.push_str(rng.pick(NUMBERS));
                } else {
                    out.push_str(rng.pick(STRINGS));
                }
            }
            out.push(')');
        }
        5 => {
            operand(rng, depth, out);
            out.push(' ');
            if rng.one_in(3) {
                out.push_str(&keyword(rng, "NOT "));
            }
            let kw = rng.pick(&["CONTAINS ", "STARTSWITH ", "ENDSWITH "]);
            out.push_str(&keyword(rng, kw));
            out.push_str(rng.pick(STRINGS));
        }
        6 => {
            out.push_str(&keyword(rng, "NOT "));
            boolean(rng, depth + 1, out);
        }
        7 | 8 => {
            out.push('(');
            boolean(rng, depth + 1, out);
            out.push(' ');
            let kw = rng.pick(&["AND", "OR"]);
            out.push_str(&keyword(rng, kw));
            out.push(' ');
            boolean(rng, depth + 1, out);
            out.push(')');
        }
        9 => {
            boolean(rng, depth + 1, out);
            out.push(' ');
            let kw = rng.pick(&["AND", "OR"]);
            out.push_str(&keyword(rng, kw));
            out.push(' ');
            boolean(rng, depth + 1, out);
        }
        _ => operand(rng, depth, out),
    }
}

fn mutate(rng: &mut SplitMix64, expr: &str) -> String {
    let mut chars: Vec<char> = expr.chars().collect();
    for _ in 0..=rng.index(4) {
        let len = chars.len();
        match rng.index(5) {
            0 if len > 0 => {
                let at = rng.index(len);
                let n = 1 + rng.index(4.min(len - at));
                chars.drain(at..at + n);
            }
            1 if len > 1 => {
                let (i, j) = (rng.index(len), rng.index(len));
                chars.swap(i, j);
            }
            2 if len > 0 => {
                let at = rng.index(len);
                let n = 1 + rng.index(8.min(len - at));
                let piece: Vec<char> = chars[at..at + n].to_vec();
                let to = rng.index(len + 1);
                chars.splice(to..to, piece);
            }
            3 => {
                let at = rng.index(len + 1);
                let c = char::from_u32(rng.index(0x3000) as u32).unwrap_or('?');
                chars.insert(at, c);
            }
            _ => {
                let at = rng.index(len + 1);
                chars.splice(at..at, rng.pick(SNIPPETS).chars());
            }
        }
    }
    chars.into_iter().collect()
}

/// Rare, expensive shapes: nesting around the limits and long chains.
fn pathological(rng: &mut SplitMix64) -> String {
    let n = MAX_NESTING_DEPTH - 2 + rng.index(5);
    match rng.index(6) {
        0 => format!("{}a = 1{}", "(".repeat(n), ")".repeat(n)),
        1 => format!("{}a", "NOT ".repeat(n)),
        2 => format!("a = {}1", "-".repeat(n)),
        3 => format!("a{}", " = a".repeat(MAX_AST_HEIGHT - 2 + rng.index(5))),
        4 => (0..200).map(|i| format!("a <> '{i}'")).collect::<Vec<_>>().join(" AND "),
        _ => format!("{}a{}", "(".repeat(3 * n), ")".repeat(rng.index(3 * n))),
    }
}

fn expression(rng: &mut SplitMix64) -> String {
    if rng.one_in(1000) {
        return pathological(rng);
    }
    if rng.one_in(50) {
        // Random text from a small alphabet rich in syntax.
        let alphabet: Vec<char> = "ab1'() =<>-+.,eNOTANDISL\n/*_$é".chars().collect();
        return (0..rng.index(24)).map(|_| rng.pick(&alphabet)).collect();
    }
    let mut s = String::new();
    boolean(rng, 0, &mut s);
    if rng.one_in(3) {
        s = mutate(rng, &s);
    }
    s
}

fn properties(rng: &mut SplitMix64) -> VecMap<String, PropValue> {
    let mut props = VecMap::new();
    for name in NAMES {
        if rng.index(3) == 0 {
            continue;
        }
        let v = if rng.one_in(8) {
            match rng.index(7) {
                0 => PropValue::Int(rng.pick(&[0, 3, -1, i32::MIN, i32::MAX])),
                1 => PropValue::Long(rng.pick(&[3, 99_999_999_999, i64::MIN, i64::MAX])),
                2 => PropValue::Double(rng.pick(&[0.0, -0.0, 3.5, f64::NAN, f64::INFINITY, 1e300])),
                3 => PropValue::Bool(rng.one_in(2)),
                4 => PropValue::Null,
                5 => PropValue::Object,
                _ => {
                    let base = rng.pick(VALUES);
                    PropValue::Str(mutate(rng, base))
                }
            }
        } else {
            PropValue::Str(rng.pick(VALUES).to_string())
        };
        props.insert(name.to_string(), v);
    }
    props
}

fn mix(digest: u64, v: u64) -> u64 {
    (digest ^ v).wrapping_mul(0x0000_0100_0000_01b3)
}

/// Runs `cases` random and mutated expressions through compile and evaluation (both the map
/// and the callback API, 5.x and 4.9 grammars) and checks invariants; panics if one breaks.
/// Returns a digest of all outcomes, identical for identical `(cases, seed)`.
pub fn fuzz_smoke(cases: u64, seed: u64) -> u64 {
    let mut rng = SplitMix64::new(seed);
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    for _ in 0..cases {
        let expr = expression(&mut rng);
        let version = if rng.one_in(6) { Sql92Version::V4_9 } else { Sql92Version::V5 };
        match compile(&expr, version) {
            Ok(e) => {
                let props = properties(&mut rng);
                let v = e.evaluate_props(&props);
                let via_callback = e.evaluate(&|n| props.get(n).cloned());
                assert_eq!(v, via_callback, "evaluate paths disagree on {expr:?}");
                assert_eq!(e.matches_broker(&props), v == Verdict::True, "{expr:?}");
                let strings: VecMap<String, String> = props
                    .iter()
                    .filter_map(|(k, v)| match v {
                        PropValue::Str(s) => Some((k.clone(), s.clone())),
                        _ => None,
                    })
                    .collect();
                let broker = e.evaluate_props(&strings);
                assert_eq!(e.matches_broker(&strings), broker == Verdict::True, "{expr:?}");
                let code = |v: &Verdict| match v {
                    Verdict::True => 1,
                    Verdict::False => 2,
                    Verdict::Null => 3,
                    Verdict::Error(_) => 4,
                };
                digest = mix(digest, code(&v) * 8 + code(&broker));
            }
            Err(err) => {
                assert!(err.position <= expr.chars().count(), "position {} beyond {expr:?}", err.position);
                assert!(!err.message.is_empty());
                digest = mix(digest, 100 + err.position as u64);
            }
        }
    }
    digest
}
