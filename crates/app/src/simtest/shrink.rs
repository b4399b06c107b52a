//! Smaller variants of a scenario, for shrinking a failure, on the shape the three models share:
//! drop a group, a consumer (with the timeline actions that name it), a timeline action, a send
//! script; halve a send's count and a topic's size; drop the settings a model names as
//! simplifiable. A candidate the parser refuses fails `valid-scenario`, not the invariant being
//! shrunk, so it is never taken.

use serde_json::Value;

/// What differs between the models' scenario shapes.
pub struct Shape {
    /// Per-consumer settings whose removal makes a scenario simpler (failures, latencies).
    pub simplify: &'static [&'static str],
    /// Topic fields that give its size (`queues`, `partitions`, `segments`).
    pub sizes: &'static [&'static str],
}

/// A consumer's identity: its name, which defaults to its clientId (every model).
fn consumer_id(c: &Value) -> Option<&str> {
    c["name"].as_str().or(c["clientId"].as_str())
}

fn names_consumer(action: &Value, id: &str) -> bool {
    action["consumer"].as_str() == Some(id)
        || action["clientId"].as_str() == Some(id)
        || consumer_id(&action["consumer"]) == Some(id)
}

fn array_len(v: &Value, key: &str) -> usize {
    v[key].as_array().map(Vec::len).unwrap_or(0)
}

fn drop_actions_naming(c: &mut Value, ids: &[String], group: Option<&str>) {
    if let Some(t) = c["timeline"].as_array_mut() {
        t.retain(|a| (group.is_none() || a["group"].as_str() != group) && !ids.iter().any(|m| names_consumer(a, m)));
    }
}

/// Every consumer list of the scenario: each group's (RocketMQ, Kafka) and the top-level one (Pulsar).
fn consumer_lists(s: &Value) -> Vec<Vec<String>> {
    let mut lists: Vec<Vec<String>> = Vec::new();
    for g in 0..array_len(s, "groups") {
        lists.push(vec!["groups".into(), g.to_string(), "consumers".into()]);
    }
    if s["consumers"].is_array() {
        lists.push(vec!["consumers".into()]);
    }
    lists
}

fn at_path<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, key| match key.parse::<usize>() {
        Ok(i) if v.is_array() => &mut v[i],
        _ => &mut v[key.as_str()],
    })
}

/// Candidates, most reducing first.
pub fn candidates(s: &Value, shape: &Shape) -> Vec<Value> {
    let mut out = Vec::new();
    // Drop a whole group (and the actions on it and its members).
    if array_len(s, "groups") > 1 {
        for g in 0..array_len(s, "groups") {
            let mut c = s.clone();
            let group = c["groups"][g].clone();
            let members: Vec<String> =
                group["consumers"].as_array().into_iter().flatten().filter_map(|m| consumer_id(m).map(str::to_string)).collect();
            c["groups"].as_array_mut().into_iter().for_each(|a| {
                a.remove(g);
            });
            drop_actions_naming(&mut c, &members, group["name"].as_str());
            out.push(c);
        }
    }
    // Drop a consumer.
    for list in consumer_lists(s) {
        let len = at_path(&mut s.clone(), &list).as_array().map(Vec::len).unwrap_or(0);
        for k in 0..len {
            let mut c = s.clone();
            let Some(consumers) = at_path(&mut c, &list).as_array_mut() else { continue };
            let removed = consumers.remove(k);
            let id = consumer_id(&removed).unwrap_or("").to_string();
            drop_actions_naming(&mut c, &[id], None);
            out.push(c);
        }
    }
    // Drop a timeline action.
    for i in 0..array_len(s, "timeline") {
        let mut c = s.clone();
        if let Some(t) = c["timeline"].as_array_mut() {
            t.remove(i);
        }
        out.push(c);
    }
    // Drop a send script, or halve its count.
    for p in 0..array_len(s, "producers") {
        for k in 0..array_len(&s["producers"][p], "sends") {
            let mut c = s.clone();
            if let Some(sends) = c["producers"][p]["sends"].as_array_mut() {
                sends.remove(k);
            }
            out.push(c);
            let count = s["producers"][p]["sends"][k]["count"].as_u64().unwrap_or(1);
            if count > 1 {
                let mut c = s.clone();
                c["producers"][p]["sends"][k]["count"] = (count / 2).into();
                out.push(c);
            }
        }
    }
    // Halve a topic's size.
    for t in 0..array_len(s, "topics") {
        for key in shape.sizes {
            let n = s["topics"][t][*key].as_u64().unwrap_or(1);
            if n > 1 {
                let mut c = s.clone();
                c["topics"][t][*key] = (n / 2).into();
                out.push(c);
            }
        }
    }
    // Simplify consumers.
    for list in consumer_lists(s) {
        let len = at_path(&mut s.clone(), &list).as_array().map(Vec::len).unwrap_or(0);
        for k in 0..len {
            for key in shape.simplify {
                let mut c = s.clone();
                let consumer = &mut at_path(&mut c, &list)[k];
                if consumer.as_object_mut().and_then(|o| o.remove(*key)).is_some() {
                    out.push(c);
                }
            }
        }
    }
    out
}
