//! Smaller variants of a RocketMQ scenario, for shrinking a failure: drop a consumer (with the
//! timeline actions that name it), a timeline action, a send script, a group, a producer, a
//! broker property; halve message counts and queue counts. Each candidate is still valid.

use serde_json::Value;

fn names_consumer(action: &Value, name: &str) -> bool {
    action["consumer"].as_str() == Some(name)
        || action["clientId"].as_str() == Some(name)
        || action["consumer"]["name"].as_str() == Some(name)
}

fn array_len(v: &Value, key: &str) -> usize {
    v[key].as_array().map(Vec::len).unwrap_or(0)
}

/// Candidates, most reducing first.
pub fn candidates(s: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    // Drop a whole group (and the actions on it and its members).
    for g in 0..array_len(s, "groups") {
        if array_len(s, "groups") < 2 {
            break;
        }
        let mut c = s.clone();
        let group = c["groups"][g].clone();
        let gname = group["name"].as_str().unwrap_or("").to_string();
        let members: Vec<String> =
            group["consumers"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str().map(str::to_string)).collect();
        c["groups"].as_array_mut().unwrap().remove(g);
        if let Some(t) = c["timeline"].as_array_mut() {
            t.retain(|a| a["group"].as_str() != Some(&gname) && !members.iter().any(|m| names_consumer(a, m)));
        }
        out.push(c);
    }
    // Drop a consumer.
    for g in 0..array_len(s, "groups") {
        for k in 0..array_len(&s["groups"][g], "consumers") {
            let mut c = s.clone();
            let name = c["groups"][g]["consumers"][k]["name"].as_str().unwrap_or("").to_string();
            c["groups"][g]["consumers"].as_array_mut().unwrap().remove(k);
            if let Some(t) = c["timeline"].as_array_mut() {
                t.retain(|a| !names_consumer(a, &name));
            }
            out.push(c);
        }
    }
    // Drop a timeline action.
    for i in 0..array_len(s, "timeline") {
        let mut c = s.clone();
        c["timeline"].as_array_mut().unwrap().remove(i);
        out.push(c);
    }
    // Drop a send script, or halve its count.
    for p in 0..array_len(s, "producers") {
        for k in 0..array_len(&s["producers"][p], "sends") {
            let mut c = s.clone();
            c["producers"][p]["sends"].as_array_mut().unwrap().remove(k);
            out.push(c);
            let count = s["producers"][p]["sends"][k]["count"].as_u64().unwrap_or(1);
            if count > 1 {
                let mut c = s.clone();
                c["producers"][p]["sends"][k]["count"] = (count / 2).into();
                out.push(c);
            }
        }
    }
    // Halve a topic's queues.
    for t in 0..array_len(s, "topics") {
        let q = s["topics"][t]["queues"].as_u64().unwrap_or(1);
        if q > 1 {
            let mut c = s.clone();
            c["topics"][t]["queues"] = (q / 2).into();
            out.push(c);
        }
    }
    // Simplify consumers: no failures, no latency, short listeners.
    for g in 0..array_len(s, "groups") {
        for k in 0..array_len(&s["groups"][g], "consumers") {
            for key in ["consumeResult", "latencyMs", "onStartFailure"] {
                if s["groups"][g]["consumers"][k].get(key).is_some() {
                    let mut c = s.clone();
                    c["groups"][g]["consumers"][k].as_object_mut().unwrap().remove(key);
                    out.push(c);
                }
            }
        }
    }
    out
}
