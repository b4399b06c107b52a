//! The assignor input in index form, as `AbstractPartitionAssignor.assign` prepares it (spec §1):
//! `partitionsPerTopic` holds only subscribed topics that have metadata and partitions, and a
//! partition is a global id (`gid`) in `TopicPartition` order (topic name, then partition).

use mqviz_engine::sort::{CollectSorted, StableSort};
use std::collections::{BTreeMap, HashMap};

use super::{AssignorError, ClientMember, Cluster, GroupAssignment, TopicMetadata, TopicName, MAX_PARTITIONS_PER_TOPIC};
use crate::fast_hash::LookupMap;
use crate::java_order::{iteration_order, java_string_cmp, java_string_hash, TableInit};

/// "No member" / "no partition" in index arrays.
pub(super) const NONE: u32 = u32::MAX;

pub(super) struct Topic<'a> {
    pub name: &'a str,
    pub count: u32,
    pub first_gid: u32,
    pub name_hash: i32,
    pub metadata: &'a TopicMetadata,
}

pub(super) struct Group<'a> {
    /// Distinct member ids at their first position, with the last subscription given for them
    /// (`HashMap.put` replaces the value and keeps the slot).
    pub members: Vec<&'a ClientMember>,
    /// Iteration order of the leader's `HashMap<String, Subscription>`.
    pub hash_order: Vec<u32>,
    /// Position of each member id in Java `String` order.
    pub rank: Vec<u32>,
    /// `partitionsPerTopic`, sorted by name.
    pub topics: Vec<Topic<'a>>,
    /// Topic of each gid.
    pub topic_of: Vec<u32>,
    /// Each member's subscription restricted to `partitionsPerTopic`, in its order, duplicates kept.
    pub subscribed: Vec<Vec<u32>>,
    /// Each member's raw subscription as ids of distinct names (known to the cluster or not).
    pub raw_topics: Vec<Vec<u32>>,
    pub raw_topic_count: usize,
    /// Each member's owned partitions of `partitionsPerTopic` topics, as gids, in input order.
    pub owned: Vec<Vec<u32>>,
}

impl<'a> Group<'a> {
    pub fn new(cluster: &'a Cluster, input: &'a [ClientMember]) -> Result<Group<'a>, AssignorError> {
        let mut slot: HashMap<&str, usize> = HashMap::new();
        let mut members: Vec<&ClientMember> = Vec::new();
        for m in input {
            match slot.get(m.id.as_str()) {
                Some(&i) => members[i] = m,
                None => {
                    slot.insert(&m.id, members.len());
                    members.push(m);
                }
            }
        }
        let hashes: Vec<i32> = members.iter().map(|m| java_string_hash(&m.id)).collect();
        let hash_order: Vec<u32> = iteration_order(&hashes, TableInit::Default).into_iter().map(|i| i as u32).collect();
        let mut by_id: Vec<u32> = (0..members.len() as u32).collect();
        by_id.stable_sort_by(|a, b| java_string_cmp(&members[*a as usize].id, &members[*b as usize].id));
        let mut rank = vec![0u32; members.len()];
        for (r, m) in by_id.iter().enumerate() {
            rank[*m as usize] = r as u32;
        }

        // Every subscribed name once, in first-seen order; those with partitions become topics.
        let mut raw_index: LookupMap<&str, u32> = LookupMap::default();
        let mut raw_names: Vec<&str> = Vec::new();
        let raw_topics: Vec<Vec<u32>> = members
            .iter()
            .map(|m| {
                m.topics
                    .iter()
                    .map(|t| {
                        *raw_index.entry(t.as_str()).or_insert_with(|| {
                            raw_names.push(t);
                            raw_names.len() as u32 - 1
                        })
                    })
                    .collect()
            })
            .collect();
        let mut names: Vec<u32> = (0..raw_names.len() as u32)
            .filter(|r| cluster.get(raw_names[*r as usize]).is_some_and(|md| md.partitions > 0))
            .collect();
        names.stable_sort_by(|a, b| java_string_cmp(raw_names[*a as usize], raw_names[*b as usize]));
        let mut topic_of_raw = vec![NONE; raw_names.len()];
        let mut topics = Vec::with_capacity(names.len());
        let mut topic_of = Vec::new();
        for raw in names {
            let name = raw_names[raw as usize];
            let (key, metadata) = cluster.get_key_value(name).ok_or_else(|| AssignorError::InvalidInput(name.to_string()))?;
            if metadata.partitions > MAX_PARTITIONS_PER_TOPIC || topic_of.len() > u32::MAX as usize / 2 {
                return Err(AssignorError::InvalidInput(format!(
                    "topic {name} has too many partitions ({})",
                    metadata.partitions
                )));
            }
            let count = metadata.partitions as u32;
            topic_of_raw[raw as usize] = topics.len() as u32;
            topic_of.extend(std::iter::repeat_n(topics.len() as u32, count as usize));
            topics.push(Topic {
                name: key,
                count,
                first_gid: topic_of.len() as u32 - count,
                name_hash: java_string_hash(key),
                metadata,
            });
        }
        let subscribed = raw_topics
            .iter()
            .map(|list| list.iter().map(|r| topic_of_raw[*r as usize]).filter(|t| *t != NONE).collect())
            .collect();
        let mut owned = Vec::with_capacity(members.len());
        for m in &members {
            let mut gids = Vec::with_capacity(m.owned.len());
            for tp in &m.owned {
                let Some(&raw) = raw_index.get(tp.topic.as_str()) else { continue };
                let t = topic_of_raw[raw as usize];
                if t == NONE {
                    continue;
                }
                let topic = &topics[t as usize];
                if tp.partition < 0 || tp.partition as u32 >= topic.count {
                    return Err(AssignorError::InvalidInput(format!(
                        "member {} owns {}-{} but the topic has {} partitions",
                        m.id, tp.topic, tp.partition, topic.count
                    )));
                }
                gids.push(topic.first_gid + tp.partition as u32);
            }
            owned.push(gids);
        }
        Ok(Group { members, hash_order, rank, topics, topic_of, subscribed, raw_topics, raw_topic_count: raw_names.len(), owned })
    }

    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    pub fn partition_count(&self) -> usize {
        self.topic_of.len()
    }

    /// The partition number of a gid.
    pub fn partition_of(&self, gid: u32) -> u32 {
        gid - self.topics[self.topic_of[gid as usize] as usize].first_gid
    }

    /// `client.rack` when set and non-empty.
    pub fn rack_of(&self, member: usize) -> Option<&'a str> {
        self.members[member].rack.as_deref().filter(|r| !r.is_empty())
    }

    /// Whether the member's raw subscription lists the topic.
    pub fn subscribes(&self, member: usize, topic: u32) -> bool {
        self.subscribed[member].contains(&topic)
    }

    /// `AbstractPartitionAssignor.MemberInfo` order: static members by instance id first, then
    /// dynamic ones by member id; a stable sort of `members`.
    pub fn sort_member_info(&self, members: &mut [u32]) {
        members.stable_sort_by(|a, b| {
            let (x, y) = (self.members[*a as usize], self.members[*b as usize]);
            match (&x.instance_id, &y.instance_id) {
                (Some(i), Some(j)) => java_string_cmp(i, j),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => self.rank[*a as usize].cmp(&self.rank[*b as usize]),
            }
        });
    }

    /// Per-member gid lists to the public shape; every member present.
    pub fn to_assignment(&self, mut per_member: Vec<Vec<u32>>) -> GroupAssignment {
        per_member.resize(self.members.len(), Vec::new());
        let names: Vec<TopicName> = self.topics.iter().map(|t| TopicName::from(t.name)).collect();
        let mut out: Vec<(String, BTreeMap<TopicName, Vec<i32>>)> = Vec::with_capacity(self.members.len());
        for (m, mut gids) in self.members.iter().zip(per_member) {
            gids.stable_sort();
            let mut topics: Vec<(TopicName, Vec<i32>)> = Vec::new();
            let mut current = NONE;
            for gid in gids {
                let t = self.topic_of[gid as usize];
                let topic = &self.topics[t as usize];
                if t != current {
                    current = t;
                    topics.push((names[t as usize].clone(), Vec::new()));
                }
                if let Some(last) = topics.last_mut() {
                    last.1.push((gid - topic.first_gid) as i32);
                }
            }
            out.push((m.id.clone(), topics.into_iter().collect_map()));
        }
        out.into_iter().collect_map()
    }
}
