//! `GroupSpecImpl` and `SubscribedTopicDescriberImpl` in index form, with the Java iteration
//! orders the assignors observe (spec §0.3, §10): member ids in `memberSpecs` `HashMap` order,
//! subscribed topic ids in the order of the member's `HashSet<String>` of names, previous targets
//! as a `HashMap<Uuid, HashSet<Integer>>`. Only the homogeneous uniform builder depends on the
//! last two, so they are computed on request.

use mqviz_engine::sort::{CollectSorted, StableSort};
use std::collections::BTreeMap;

use super::{GroupAssignment, ServerMember, TopicName, TopicsImage};
use crate::fast_hash::LookupMap;
use crate::java_order::{iteration_order, java_string_hash, TableInit};
use crate::uuid::Uuid;

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

/// A member's assignment with `Set` semantics per topic: `add` may repeat a partition and
/// `remove` drops every copy, so the final deduplicated lists equal the Java sets.
#[derive(Clone, Debug, Default)]
pub(super) struct Target {
    topics: Vec<(usize, Vec<i32>)>,
}

impl Target {
    fn slot(&mut self, topic: usize) -> &mut Vec<i32> {
        let i = match self.topics.iter().position(|(t, _)| *t == topic) {
            Some(i) => i,
            None => {
                self.topics.push((topic, Vec::new()));
                self.topics.len() - 1
            }
        };
        &mut self.topics[i].1
    }

    pub fn add(&mut self, topic: usize, partition: i32) {
        self.slot(topic).push(partition);
    }

    pub fn extend(&mut self, topic: usize, partitions: impl IntoIterator<Item = i32>) {
        self.slot(topic).extend(partitions);
    }

    pub fn remove(&mut self, topic: usize, partition: i32) {
        if let Some((_, list)) = self.topics.iter_mut().find(|(t, _)| *t == topic) {
            list.retain(|p| *p != partition);
        }
    }
}

/// A subscribed name: its Java hash and its image slot (`None` when the image lacks it).
struct Name {
    hash: i32,
    slot: Option<usize>,
}

pub(super) struct GroupSpec<'a> {
    members: Vec<&'a ServerMember>,
    /// `memberIds()` iteration order, as member slots.
    pub member_order: Vec<usize>,
    pub topics: Vec<SpecTopic>,
    names: Vec<Name>,
    /// Per member: distinct subscribed names in list order.
    member_names: Vec<Vec<usize>>,
    /// Per member: resolvable subscribed topics, distinct, in list order.
    pub subscriptions: Vec<Vec<usize>>,
    /// Per member: the previous target (resolvable topics), distinct partitions in list order,
    /// topics in the order they were given.
    previous: Vec<Vec<(usize, Vec<i32>)>>,
    pub subscription_type: SubscriptionType,
    /// Per topic slot and partition: in some member's previous target.
    assigned: Vec<Vec<bool>>,
}

impl<'a> GroupSpec<'a> {
    pub fn new(image: &TopicsImage, input: &'a [ServerMember]) -> GroupSpec<'a> {
        let mut slot: LookupMap<&str, usize> = LookupMap::default();
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

        let mut name_ids: LookupMap<&str, usize> = LookupMap::default();
        let mut names: Vec<Name> = Vec::new();
        let mut name_subscribers: Vec<usize> = Vec::new();
        let mut last_seen_by: Vec<usize> = Vec::new();
        let mut member_names = Vec::with_capacity(members.len());
        let mut subscriptions = Vec::with_capacity(members.len());
        for (member, m) in members.iter().enumerate() {
            let mut own: Vec<usize> = Vec::with_capacity(m.topics.len());
            for t in &m.topics {
                let id = *name_ids.entry(t.as_str()).or_insert_with(|| {
                    names.push(Name { hash: java_string_hash(t), slot: by_name.get(t.as_str()).copied() });
                    name_subscribers.push(0);
                    last_seen_by.push(usize::MAX);
                    names.len() - 1
                });
                if last_seen_by[id] != member {
                    last_seen_by[id] = member;
                    name_subscribers[id] += 1;
                    own.push(id);
                }
            }
            subscriptions.push(own.iter().filter_map(|n| names[*n].slot).collect());
            member_names.push(own);
        }
        let subscription_type = if name_subscribers.iter().all(|n| *n == members.len()) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        };

        let mut previous = Vec::with_capacity(members.len());
        let mut assigned: Vec<Vec<bool>> = topics.iter().map(|t| vec![false; t.partitions.max(0) as usize]).collect();
        for m in &members {
            let mut target = Vec::with_capacity(m.target.len());
            for (name, list) in &m.target {
                let Some(&t) = by_name.get(name.as_str()) else { continue };
                let mut distinct: Vec<i32> = Vec::with_capacity(list.len());
                for p in list {
                    if let Some(flag) = usize::try_from(*p).ok().and_then(|p| assigned[t].get_mut(p)) {
                        *flag = true;
                    }
                    if !distinct.contains(p) {
                        distinct.push(*p);
                    }
                }
                target.push((t, distinct));
            }
            previous.push(target);
        }
        GroupSpec { members, member_order, topics, names, member_names, subscriptions, previous, subscription_type, assigned }
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

    /// The member's previous target as the assignors read it: distinct partitions per topic.
    pub fn previous(&self, member: usize) -> &[(usize, Vec<i32>)] {
        &self.previous[member]
    }

    /// `new HashSet<>(member.subscribedTopicIds())`: the resolvable topics in the order of a
    /// `HashSet<Uuid>` copied from `TopicIds`, which iterates the member's `HashSet<String>` of
    /// names and is sized by the number of names.
    pub fn subscribed_topic_set(&self, member: usize) -> Vec<usize> {
        let own = &self.member_names[member];
        let name_order = iteration_order(
            &own.iter().map(|n| self.names[*n].hash).collect::<Vec<_>>(),
            TableInit::CopyOfCollection(self.members[member].topics.len()),
        );
        let resolved: Vec<usize> = name_order.iter().filter_map(|i| self.names[own[*i]].slot).collect();
        let order = iteration_order(
            &resolved.iter().map(|t| self.topics[*t].id.java_hash()).collect::<Vec<_>>(),
            TableInit::CopyOfCollection(own.len()),
        );
        order.into_iter().map(|i| resolved[i]).collect()
    }

    /// The previous target in `HashMap<Uuid, HashSet<Integer>>` iteration order: topics by id
    /// hash, partitions of each `new HashSet<>(list)` by value.
    pub fn previous_in_java_order(&self, member: usize) -> Vec<(usize, Vec<i32>)> {
        let target = &self.previous[member];
        let order =
            iteration_order(&target.iter().map(|(t, _)| self.topics[*t].id.java_hash()).collect::<Vec<_>>(), TableInit::Default);
        let raw = &self.members[member].target;
        order
            .into_iter()
            .map(|i| {
                let (t, distinct) = &target[i];
                let given = raw.iter().find(|(n, _)| self.topics[*t].name == *n).map_or(distinct.len(), |(_, l)| l.len());
                let set_order = iteration_order(distinct, TableInit::CopyOfCollection(given));
                (*t, set_order.into_iter().map(|j| distinct[j]).collect())
            })
            .collect()
    }

    pub fn to_assignment(&self, targets: Vec<Target>) -> GroupAssignment {
        let names: Vec<TopicName> = self.topics.iter().map(|t| TopicName::from(t.name.as_str())).collect();
        let mut out: Vec<(String, BTreeMap<TopicName, Vec<i32>>)> = Vec::with_capacity(self.members.len());
        let mut targets = targets.into_iter();
        for m in &self.members {
            let mut topics: Vec<(TopicName, Vec<i32>)> = Vec::new();
            for (t, mut parts) in targets.next().unwrap_or_default().topics {
                parts.stable_sort();
                parts.dedup();
                if !parts.is_empty() {
                    topics.push((names[t].clone(), parts));
                }
            }
            out.push((m.id.clone(), topics.into_iter().collect_map()));
        }
        out.into_iter().collect_map()
    }
}
