//! `mqviz bench kafka`: the bit-exact Kafka assignors on a whole group of 1,000 members over
//! 10,000 partitions, timed warm (median of repeated runs) and printed against their targets.

use std::time::Instant;

use mqviz_engine::SplitMix64;
use mqviz_kafka::assignor::{self, ClientAssignor, ClientMember, Cluster, GroupAssignment, TopicMetadata, TopicPartition};
use mqviz_kafka::server_assignor::{self, ServerAssignor, ServerMember, ServerTopic, TopicsImage};
use mqviz_kafka::uuid::Uuid;

const MEMBERS: usize = 1_000;

/// Topic names `topic-00`.. with `partitions` each.
fn topic_names(topics: usize) -> Vec<String> {
    (0..topics).map(|t| format!("topic-{t:02}")).collect()
}

fn cluster(topics: usize, partitions: i32) -> Cluster {
    topic_names(topics).into_iter().map(|t| (t, TopicMetadata { partitions, replica_racks: Vec::new() })).collect()
}

fn member_id(i: usize, rng: &mut SplitMix64) -> String {
    format!("consumer-{i}-{:016x}", rng.next_u64())
}

/// Every member subscribes to all topics.
fn uniform_members(topics: usize, rng: &mut SplitMix64) -> Vec<ClientMember> {
    let names = topic_names(topics);
    (0..MEMBERS)
        .map(|i| ClientMember { id: member_id(i, rng), generation: -1, topics: names.clone(), ..Default::default() })
        .collect()
}

/// Each member subscribes to a random 10 to 30 of the topics.
fn heterogeneous_members(topics: usize, rng: &mut SplitMix64) -> Vec<ClientMember> {
    let names = topic_names(topics);
    (0..MEMBERS)
        .map(|i| {
            let want = 10 + rng.index(21);
            let mut picked: Vec<String> = Vec::with_capacity(want);
            while picked.len() < want {
                let t = &names[rng.index(names.len())];
                if !picked.contains(t) {
                    picked.push(t.clone());
                }
            }
            ClientMember { id: member_id(i, rng), generation: -1, topics: picked, ..Default::default() }
        })
        .collect()
}

/// The members after a round at `generation`: each owns what it was given; the first leaves.
fn after_round(members: &[ClientMember], result: &GroupAssignment, generation: i32) -> Vec<ClientMember> {
    members[1..]
        .iter()
        .map(|m| ClientMember {
            generation,
            owned: result[&m.id]
                .iter()
                .flat_map(|(t, ps)| ps.iter().map(move |p| TopicPartition::new(t.to_string(), *p)))
                .collect(),
            ..m.clone()
        })
        .collect()
}

fn assigned(a: &GroupAssignment) -> usize {
    a.values().map(|t| t.values().map(Vec::len).sum::<usize>()).sum()
}

/// Median wall time of `rounds` runs in milliseconds, after one warm-up run (NaN for 0 rounds).
fn median_ms<T>(rounds: usize, mut run: impl FnMut() -> T) -> (f64, T) {
    let mut last = run();
    if rounds == 0 {
        return (f64::NAN, last);
    }
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let result = run();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        // The previous result is dropped outside the timed region.
        last = result;
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], last)
}

fn report(name: &str, ms: f64, target_ms: Option<f64>, detail: String) {
    match target_ms {
        Some(t) => println!("kafka {name:<52} {ms:>8.2} ms  (target {t} ms: {:.2}x of budget)  {detail}", ms / t),
        None => println!("kafka {name:<52} {ms:>8.2} ms  {detail}"),
    }
}

/// `KAFKA_BENCH_ONLY=<text>` times only the scenarios whose name contains it (for profiling);
/// the others still run once, since later scenarios start from their results.
fn rounds_for(name: &str, rounds: usize) -> usize {
    match std::env::var("KAFKA_BENCH_ONLY") {
        Ok(only) if !name.contains(&only) => 0,
        Ok(_) => std::env::var("KAFKA_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(rounds),
        Err(_) => rounds,
    }
}

fn client(
    name: &str,
    assignor: ClientAssignor,
    c: &Cluster,
    members: &[ClientMember],
    target: Option<f64>,
    rounds: usize,
) -> GroupAssignment {
    let rounds = rounds_for(name, rounds);
    let (ms, result) = median_ms(rounds, || assignor::assign(assignor, c, members));
    let result = result.expect("bench input is valid");
    report(name, ms, target, format!("{} partitions handed out", assigned(&result)));
    result
}

fn server_image(topics: usize, partitions: i32, rng: &mut SplitMix64) -> TopicsImage {
    topic_names(topics)
        .into_iter()
        .map(|t| (t, ServerTopic { id: Uuid::new(rng.next_u64() as i64, rng.next_u64() as i64), partitions }))
        .collect()
}

fn server_members(members: &[ClientMember]) -> Vec<ServerMember> {
    members.iter().map(|m| ServerMember { id: m.id.clone(), topics: m.topics.clone(), ..Default::default() }).collect()
}

/// Previous targets from a result, the first member gone.
fn server_after_round(members: &[ServerMember], result: &GroupAssignment) -> Vec<ServerMember> {
    members[1..]
        .iter()
        .map(|m| ServerMember { target: result[&m.id].iter().map(|(t, ps)| (t.to_string(), ps.clone())).collect(), ..m.clone() })
        .collect()
}

fn server(
    name: &str,
    assignor: ServerAssignor,
    image: &TopicsImage,
    members: &[ServerMember],
    target: Option<f64>,
) -> GroupAssignment {
    let (ms, result) = median_ms(rounds_for(name, 21), || server_assignor::assign(assignor, image, members));
    let result = result.expect("bench input is valid");
    report(name, ms, target, format!("{} partitions handed out", assigned(&result)));
    result
}

pub fn bench_kafka() {
    let mut rng = SplitMix64::new(0x006b_6166_6b61);
    // Uniform: 10 topics x 1,000 partitions; heterogeneous: 100 topics x 100 partitions.
    let uniform_cluster = cluster(10, 1_000);
    let uniform = uniform_members(10, &mut rng);
    let mixed_cluster = cluster(100, 100);
    let mixed = heterogeneous_members(100, &mut rng);

    let fresh =
        client("cooperative-sticky uniform, fresh", ClientAssignor::CooperativeSticky, &uniform_cluster, &uniform, Some(5.0), 21);
    let left = after_round(&uniform, &fresh, 1);
    client(
        "cooperative-sticky uniform, one member left",
        ClientAssignor::CooperativeSticky,
        &uniform_cluster,
        &left,
        Some(5.0),
        21,
    );
    let general = client(
        "cooperative-sticky heterogeneous (general), fresh",
        ClientAssignor::CooperativeSticky,
        &mixed_cluster,
        &mixed,
        Some(200.0),
        5,
    );
    let mixed_left = after_round(&mixed, &general, 1);
    client(
        "cooperative-sticky heterogeneous, one member left",
        ClientAssignor::CooperativeSticky,
        &mixed_cluster,
        &mixed_left,
        Some(200.0),
        5,
    );
    client("sticky heterogeneous (general), fresh", ClientAssignor::Sticky, &mixed_cluster, &mixed, Some(200.0), 5);
    client("range uniform", ClientAssignor::Range, &uniform_cluster, &uniform, Some(5.0), 21);
    client("range heterogeneous", ClientAssignor::Range, &mixed_cluster, &mixed, None, 21);
    client("roundrobin uniform", ClientAssignor::RoundRobin, &uniform_cluster, &uniform, None, 21);

    let uniform_image = server_image(10, 1_000, &mut rng);
    let mixed_image = server_image(100, 100, &mut rng);
    let uniform_server = server_members(&uniform);
    let mixed_server = server_members(&mixed);
    let fresh = server("server uniform homogeneous, fresh", ServerAssignor::Uniform, &uniform_image, &uniform_server, Some(10.0));
    server(
        "server uniform homogeneous, one member left",
        ServerAssignor::Uniform,
        &uniform_image,
        &server_after_round(&uniform_server, &fresh),
        Some(10.0),
    );
    let fresh = server("server uniform heterogeneous, fresh", ServerAssignor::Uniform, &mixed_image, &mixed_server, Some(10.0));
    server(
        "server uniform heterogeneous, one member left",
        ServerAssignor::Uniform,
        &mixed_image,
        &server_after_round(&mixed_server, &fresh),
        Some(10.0),
    );
    server("server range homogeneous", ServerAssignor::Range, &uniform_image, &uniform_server, None);
    server("server range heterogeneous", ServerAssignor::Range, &mixed_image, &mixed_server, None);
}
