//! User properties of produced messages (`Message.putUserProperty`): names and values must not be
//! blank, and names must not be one of the system properties the broker sets itself.

use mqviz_engine::vec_map::VecMap;

/// System property names (`MessageConst`), refused as user property names.
pub const SYSTEM_PROPERTIES: &[&str] = &[
    "KEYS",
    "TAGS",
    "WAIT",
    "DELAY",
    "RETRY_TOPIC",
    "REAL_TOPIC",
    "REAL_QID",
    "TRAN_MSG",
    "PGROUP",
    "MIN_OFFSET",
    "MAX_OFFSET",
    "BUYER_ID",
    "ORIGIN_MESSAGE_ID",
    "TRANSFER_FLAG",
    "CORRECTION_FLAG",
    "MQ2_FLAG",
    "RECONSUME_TIME",
    "MSG_REGION",
    "TRACE_ON",
    "UNIQ_KEY",
    "MAX_RECONSUME_TIMES",
    "CONSUME_START_TIME",
    "__STARTDELIVERTIME",
    "CLUSTER",
];

/// Why a user property is refused, if it is.
pub fn check_property(name: &str, value: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("property names must not be blank".into());
    }
    if value.trim().is_empty() {
        return Err(format!("property {name:?} has a blank value"));
    }
    if SYSTEM_PROPERTIES.contains(&name) {
        return Err(format!("{name:?} is a system property and cannot be set by the user"));
    }
    Ok(())
}

/// Parses `name=value, name=value` (the UI's send form). Errors name the 1-based entry.
pub fn parse_properties(text: &str) -> Result<VecMap<String, String>, String> {
    let mut out = VecMap::new();
    for (i, part) in text.split(',').enumerate() {
        if part.trim().is_empty() {
            if text.trim().is_empty() {
                break;
            }
            return Err(format!("properties, entry {}: empty entry", i + 1));
        }
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("properties, entry {}: expected name=value, found {:?}", i + 1, part.trim()));
        };
        let (k, v) = (k.trim(), v.trim());
        check_property(k, v).map_err(|e| format!("properties, entry {}: {e}", i + 1))?;
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let p = parse_properties("a=5, region = eu").unwrap();
        assert_eq!(p["a"], "5");
        assert_eq!(p["region"], "eu");
        assert!(parse_properties("").unwrap().is_empty());
        assert!(parse_properties("a").unwrap_err().contains("entry 1"));
        assert!(parse_properties("a=1,,b=2").unwrap_err().contains("entry 2"));
        assert!(parse_properties("TAGS=x").unwrap_err().contains("system property"));
        assert!(parse_properties("a= ").unwrap_err().contains("blank value"));
    }
}
