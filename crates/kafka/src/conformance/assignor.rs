//! Kind `kafka.assignor`: one call to a client (`range`, `roundrobin`, `sticky`,
//! `cooperative-sticky`) or server (`server-range`, `server-uniform`) assignor. Output:
//! `{member: {topic: [partitions]}}` or `{"error": ...}`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::read::{array, field, i32_of, object, opt_string, string, strings, topic_lists};
use crate::assignor::{self, ClientAssignor, ClientMember, Cluster, GroupAssignment, TopicMetadata, TopicPartition};
use crate::conformance::error_value;
use crate::server_assignor::{self, ServerAssignor, ServerMember, ServerTopic, TopicsImage};
use crate::uuid::Uuid;

pub fn run(input: &Value) -> Result<Value, String> {
    let name = string(field(input, "assignor")?, "assignor")?;
    let counts: BTreeMap<String, i32> = object(field(input, "topics")?, "topics")?
        .iter()
        .map(|(t, n)| Ok((t.clone(), i32_of(n, &format!("topics.{t}"))?)))
        .collect::<Result<_, String>>()?;
    let members = array(field(input, "members")?, "members")?;
    let result = if let Some(server) = name.strip_prefix("server-") {
        let assignor = ServerAssignor::from_name(server).ok_or_else(|| format!("assignor: unknown {name}"))?;
        let image = topics_image(input, &counts)?;
        let members = members.iter().enumerate().map(|(i, m)| server_member(m, i)).collect::<Result<Vec<_>, _>>()?;
        server_assignor::assign(assignor, &image, &members)
    } else {
        let assignor = ClientAssignor::from_name(&name).ok_or_else(|| format!("assignor: unknown {name}"))?;
        let cluster = cluster(input, &counts)?;
        let members = members.iter().enumerate().map(|(i, m)| client_member(m, i)).collect::<Result<Vec<_>, _>>()?;
        assignor::assign(assignor, &cluster, &members)
    };
    Ok(match result {
        Ok(a) => assignment_json(&a),
        Err(e) => error_value(e.to_string()),
    })
}

fn assignment_json(a: &GroupAssignment) -> Value {
    Value::Object(
        a.iter()
            .map(|(m, topics)| {
                let t = topics.iter().map(|(t, ps)| (t.to_string(), Value::from(ps.clone()))).collect();
                (m.clone(), Value::Object(t))
            })
            .collect(),
    )
}

/// Metadata with replica racks from `brokers` and `replicas` (rack-aware cases only).
fn cluster(input: &Value, counts: &BTreeMap<String, i32>) -> Result<Cluster, String> {
    let mut racks: BTreeMap<String, Option<String>> = BTreeMap::new();
    if let Some(brokers) = input.get("brokers").filter(|b| !b.is_null()) {
        for (id, rack) in object(brokers, "brokers")? {
            racks.insert(id.clone(), opt_string(Some(rack), &format!("brokers.{id}"))?);
        }
    }
    let replicas = match input.get("replicas").filter(|r| !r.is_null()) {
        Some(r) => Some(object(r, "replicas")?),
        None => None,
    };
    let mut cluster = Cluster::new();
    for (topic, count) in counts {
        let mut replica_racks = Vec::new();
        if let Some(list) = replicas.and_then(|r| r.get(topic)) {
            for (p, brokers) in array(list, &format!("replicas.{topic}"))?.iter().enumerate() {
                let what = format!("replicas.{topic}[{p}]");
                let ids = array(brokers, &what)?;
                let racks_of_partition = ids
                    .iter()
                    .map(|b| Ok(racks.get(&i32_of(b, &what)?.to_string()).cloned().flatten()))
                    .collect::<Result<Vec<_>, String>>()?;
                replica_racks.push(racks_of_partition);
            }
        }
        cluster.insert(topic.clone(), TopicMetadata { partitions: *count, replica_racks });
    }
    Ok(cluster)
}

fn client_member(m: &Value, i: usize) -> Result<ClientMember, String> {
    let what = format!("members[{i}]");
    let owned = match m.get("owned") {
        None | Some(Value::Null) => Vec::new(),
        Some(o) => topic_lists(o, &format!("{what}.owned"))?
            .into_iter()
            .flat_map(|(t, ps)| ps.into_iter().map(move |p| TopicPartition::new(t.clone(), p)))
            .collect(),
    };
    Ok(ClientMember {
        id: string(field(m, "id")?, &format!("{what}.id"))?,
        instance_id: opt_string(m.get("instance_id"), &format!("{what}.instance_id"))?,
        rack: opt_string(m.get("rack"), &format!("{what}.rack"))?,
        generation: match m.get("generation") {
            None | Some(Value::Null) => -1,
            Some(g) => i32_of(g, &format!("{what}.generation"))?,
        },
        topics: strings(field(m, "topics")?, &format!("{what}.topics"))?,
        owned,
    })
}

/// The coordinator's image: topics with an id; a topic id without metadata has -1 partitions.
fn topics_image(input: &Value, counts: &BTreeMap<String, i32>) -> Result<TopicsImage, String> {
    let ids = match input.get("topic_ids") {
        Some(v) if !v.is_null() => object(v, "topic_ids")?,
        _ => return Err("topic_ids: missing".into()),
    };
    let mut image = TopicsImage::new();
    for (name, id) in ids {
        let id = Uuid::parse(&string(id, &format!("topic_ids.{name}"))?).map_err(|e| format!("topic_ids.{name}: {e}"))?;
        image.insert(name.clone(), ServerTopic { id, partitions: counts.get(name).copied().unwrap_or(-1) });
    }
    Ok(image)
}

fn server_member(m: &Value, i: usize) -> Result<ServerMember, String> {
    let what = format!("members[{i}]");
    Ok(ServerMember {
        id: string(field(m, "id")?, &format!("{what}.id"))?,
        instance_id: opt_string(m.get("instance_id"), &format!("{what}.instance_id"))?,
        rack: opt_string(m.get("rack"), &format!("{what}.rack"))?,
        topics: strings(field(m, "topics")?, &format!("{what}.topics"))?,
        target: match m.get("owned") {
            None | Some(Value::Null) => Vec::new(),
            Some(o) => topic_lists(o, &format!("{what}.owned"))?,
        },
    })
}
