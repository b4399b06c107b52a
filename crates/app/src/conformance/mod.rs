//! The shared conformance vectors (`shared/conformance/`, format `mqviz-conformance/1`), each kind
//! sent to the model that runs it (`mqviz_<model>::conformance`). Reading a vector file, the
//! error value and check.py's comparison are the seam's (`mqviz_model::conformance`).

use serde_json::Value;

use mqviz_model::conformance::VectorFile;

/// Every kind this build runs, by model.
pub fn supported_kinds() -> impl Iterator<Item = &'static str> {
    [mqviz_rocketmq::conformance::KINDS, mqviz_kafka::conformance::KINDS, mqviz_pulsar::conformance::KINDS]
        .into_iter()
        .flatten()
        .copied()
}

/// Runs one case; `Err` for a kind no model runs.
pub fn run_case(kind: &str, input: &Value) -> Result<Value, String> {
    match kind.split('.').next() {
        Some("rocketmq") => mqviz_rocketmq::conformance::run(kind, input),
        Some("kafka") => mqviz_kafka::conformance::run(kind, input),
        Some("pulsar") => mqviz_pulsar::conformance::run(kind, input),
        _ => Err(format!("kind {kind} is not supported yet")),
    }
}

/// Whether `actual` matches `expected` under check.py's rules for `kind` (its model's
/// normalisation, then strict deep equality).
pub fn matches(kind: &str, expected: &Value, actual: &Value) -> bool {
    match kind.split('.').next() {
        Some("rocketmq") => mqviz_rocketmq::conformance::matches(kind, expected, actual),
        Some("kafka") => mqviz_kafka::conformance::matches(kind, expected, actual),
        Some("pulsar") => mqviz_pulsar::conformance::matches(kind, expected, actual),
        _ => mqviz_model::conformance::same(expected, actual),
    }
}

/// Parses a vector file's text (`name` is its basename), ready for `run_case`: a Pulsar
/// `defaults` case asks for the names its `expected` holds.
pub fn parse_vector_file(name: &str, text: &str) -> Result<VectorFile, String> {
    let mut file = mqviz_model::conformance::parse_vector_file(name, text)?;
    for (_, input, expected) in &mut file.cases {
        *input = mqviz_pulsar::conformance::name_requested_defaults(&file.kind, std::mem::take(input), expected);
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_runs_in_its_model() {
        let kinds: Vec<&str> = supported_kinds().collect();
        assert_eq!(kinds.len(), 18);
        for kind in &kinds {
            assert!(run_case(kind, &Value::Null).is_ok(), "{kind}");
        }
        assert!(run_case("rabbitmq.streams", &Value::Null).is_err());
        assert!(run_case("kafka.nope", &Value::Null).is_err());
    }
}
