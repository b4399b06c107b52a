//! `GroupSpecImpl` and `SubscribedTopicDescriberImpl` in index form, with the Java iteration
//! orders the assignors observe (spec §0.3, §10): member ids in `memberSpecs` `HashMap` order,
//! subscribed topic ids in the order of the member's `HashSet<String>` of names, previous targets
//! as a `HashMap<Uuid, HashSet<Integer>>`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{GroupAssignment, ServerMember, TopicsImage};
use crate::sim::kafka::fast_hash::LookupMap;
use crate::sim::kafka::java_order::{iteration_order, java_string_hash, TableInit};
use crate::sim::kafka::uuid::Uuid;

/// `SubscriptionType`: homogeneous iff every subscribed topic name has as many subscribers as
/// the group has members (names unknown to the image count too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubscriptionType {
    Homogeneous,
    Heterogeneous,
}

pub(super) struct SpecTopic {
    pub name: String,
    pub id: Uuid,
    /// `numPartitions(topicId)`; -1 when unknown.
    pub partitions: i32,
}

/// A member's assignment: topic slot -> partitions.
pub(super) type Target = BTreeMap<usize, BTreeSet<i32>>;

pub(super) struct GroupSpec<'a> {
    members: Vec<&'a ServerMember>,
    /// `memberIds()` iteration order, as member slots.
    pub member_order: Vec<usize>,
    pub topics: Vec<SpecTopic>,
    /// Per member: resolvable subscribed topics in `TopicIds` iteration order.
    pub subscriptions: Vec<Vec<usize>>,
    /// Per member: `TopicIds.size()`, the number of subscribed names (resolvable or not).
    pub subscribed_names: Vec<usize>,
    /// Per member: the previous target, in map iteration order, partitions in set order.
    pub previous: Vec<Vec<(usize, Vec<i32>)>>,
    pub subscription_type: SubscriptionType,
    /// Per topic slot and partition: in some member's previous target.
    assigned: Vec<Vec<bool>>,
}

impl<'a> GroupSpec<'a> {
    pub fn new(image: &TopicsImage, input: &'a [ServerMember]) -> GroupSpec<'a> {
        let mut slot: HashMap<&str, usize> = HashMap::new();
        let mut members: Vec<&ServerMember> = Vec::new();
        for m in input {
            match slot.get(m.id.as_str()) {
                Some(&i) => members[i] = m,
                None => {
                    slot.insert(&m.id, members.len());
                    members.push(m);
                }
            }
        }
        let member_order =
            iteration_order(&members.iter().map(|m| java_string_hash(&m.id)).collect::<Vec<_>>(), TableInit::Default);
        let topics: Vec<SpecTopic> =
            image.iter().map(|(name, t)| SpecTopic { name: name.clone(), id: t.id, partitions: t.partitions.max(-1) }).collect();
        let by_name: LookupMap<&str, usize> = topics.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();

        // Subscribed names interned once: id -> (Java hash, image slot).
        let mut name_ids: LookupMap<&str, usize> = LookupMap::default();
        let mut name_info: Vec<(i32, Option<usize>)> = Vec::new();
        let mut name_subscribers: Vec<usize> = Vec::new();
        let mut last_seen_by: Vec<usize> = Vec::new();
        let mut subscriptions = Vec::with_capacity(members.len());
        let mut subscribed_names = Vec::with_capacity(members.len());
        for (slot, m) in members.iter().enumerate() {
            let mut names: Vec<usize> = Vec::with_capacity(m.topics.len());
            for t in &m.topics {
                let id = *name_ids.entry(t.as_str()).or_insert_with(|| {
                    name_info.push((java_string_hash(t), by_name.get(t.as_str()).copied()));
                    name_subscribers.push(0);
                    last_seen_by.push(usize::MAX);
                    name_info.len() - 1
                });
                if last_seen_by[id] != slot {
                    last_seen_by[id] = slot;
                    name_subscribers[id] += 1;
                    names.push(id);
                }
            }
            let hashes: Vec<i32> = names.iter().map(|n| name_info[*n].0).collect();
            let order = iteration_order(&hashes, TableInit::CopyOfCollection(m.topics.len()));
            subscriptions.push(order.iter().filter_map(|i| name_info[names[*i]].1).collect());
            subscribed_names.push(names.len());
        }
        let subscription_type = if name_subscribers.iter().all(|n| *n == members.len()) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        };

        let mut previous = Vec::with_capacity(members.len());
        let mut assigned: Vec<Vec<bool>> = topics.iter().map(|t| vec![false; t.partitions.max(0) as usize]).collect();
        for m in &members {
            let resolved: Vec<(usize, &Vec<i32>)> =
                m.target.iter().filter_map(|(n, ps)| by_name.get(n.as_str()).map(|t| (*t, ps))).collect();
            let order =
                iteration_order(&resolved.iter().map(|(t, _)| topics[*t].id.java_hash()).collect::<Vec<_>>(), TableInit::Default);
            let mut target = Vec::with_capacity(resolved.len());
            for i in order {
                let (t, list) = resolved[i];
                let mut distinct: Vec<i32> = Vec::with_capacity(list.len());
                for p in list {
                    if !distinct.contains(p) {
                        distinct.push(*p);
                    }
                }
                let order = iteration_order(&distinct, TableInit::CopyOfCollection(list.len()));
                let partitions: Vec<i32> = order.into_iter().map(|j| distinct[j]).collect();
                for p in &partitions {
                    if let Some(flag) = usize::try_from(*p).ok().and_then(|p| assigned[t].get_mut(p)) {
                        *flag = true;
                    }
                }
                target.push((t, partitions));
            }
            previous.push(target);
        }
        GroupSpec { members, member_order, topics, subscriptions, subscribed_names, previous, subscription_type, assigned }
    }

    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    pub fn member(&self, slot: usize) -> &ServerMember {
        self.members[slot]
    }

    /// `isPartitionAssigned`: in some member's previous target.
    pub fn is_assigned(&self, topic: usize, partition: i32) -> bool {
        usize::try_from(partition).ok().and_then(|p| self.assigned[topic].get(p)).copied().unwrap_or(false)
    }

    pub fn subscribes(&self, member: usize, topic: usize) -> bool {
        self.subscriptions[member].contains(&topic)
    }

    pub fn to_assignment(&self, targets: &[Target]) -> GroupAssignment {
        let mut out: Vec<(String, BTreeMap<String, Vec<i32>>)> = Vec::with_capacity(self.members.len());
        for (i, m) in self.members.iter().enumerate() {
            let topics = targets
                .get(i)
                .into_iter()
                .flatten()
                .filter(|(_, parts)| !parts.is_empty())
                .map(|(t, parts)| (self.topics[*t].name.clone(), parts.iter().copied().collect()))
                .collect();
            out.push((m.id.clone(), topics));
        }
        out.into_iter().collect()
    }
}
