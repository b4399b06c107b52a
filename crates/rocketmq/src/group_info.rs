//! The broker's `ConsumerGroupInfo` (spec §4): one topic-keyed subscription table per group.
//!
//! This is where inconsistent groups go wrong: every member's heartbeat writes into the same
//! table, the strictly newest `subVersion` wins per topic, and topics missing from a heartbeat
//! are removed.

use mqviz_engine::vec_map::VecMap;

use super::filterapi::SubscriptionData;
use super::types::{ConsumeFromWhere, MessageModel};

/// A connection from a client to the broker. `channel` is unique per connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelInfo {
    pub channel: String,
    pub client_id: String,
    pub last_update: u64,
}

/// What one heartbeat did to one topic of the subscription table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableChange {
    /// The topic was absent and this heartbeat added it (reported as updated).
    Added { new: SubscriptionData },
    /// A strictly newer subVersion replaced the entry (not reported as updated: no CHANGE notify).
    Overwritten { old: SubscriptionData, new: SubscriptionData },
    /// Same topic, not newer: ignored.
    KeptNewer { kept: SubscriptionData, offered: SubscriptionData },
    /// The topic was not in this heartbeat's list and was removed (reported as updated).
    Removed { old: SubscriptionData },
}

#[derive(Clone, Debug, Default)]
pub struct ConsumerGroupInfo {
    /// Insertion-ordered: the order in which NOTIFY_CONSUMER_IDS_CHANGED reaches members.
    pub channels: Vec<ChannelInfo>,
    pub subscription_table: VecMap<String, SubscriptionData>,
    pub message_model: Option<MessageModel>,
    pub consume_from_where: Option<ConsumeFromWhere>,
}

impl ConsumerGroupInfo {
    /// `updateChannel`: true only for a channel not seen before.
    pub fn update_channel(&mut self, channel: &str, client_id: &str, now: u64) -> bool {
        match self.channels.iter_mut().find(|c| c.channel == channel) {
            None => {
                self.channels.push(ChannelInfo {
                    channel: channel.to_string(),
                    client_id: client_id.to_string(),
                    last_update: now,
                });
                true
            }
            Some(old) => {
                old.client_id = client_id.to_string();
                old.last_update = now;
                false
            }
        }
    }

    /// `updateSubscription`: returns (updated, what happened per topic).
    pub fn update_subscription(&mut self, sub_list: &[SubscriptionData]) -> (bool, Vec<TableChange>) {
        let mut updated = false;
        let mut changes = Vec::new();
        for sub in sub_list {
            match self.subscription_table.get(&sub.topic) {
                None => {
                    self.subscription_table.insert(sub.topic.clone(), sub.clone());
                    updated = true;
                    changes.push(TableChange::Added { new: sub.clone() });
                }
                Some(old) if sub.sub_version > old.sub_version => {
                    changes.push(TableChange::Overwritten { old: old.clone(), new: sub.clone() });
                    self.subscription_table.insert(sub.topic.clone(), sub.clone());
                }
                Some(old) => {
                    if old != sub {
                        changes.push(TableChange::KeptNewer { kept: old.clone(), offered: sub.clone() });
                    }
                }
            }
        }
        let stale: Vec<String> =
            self.subscription_table.keys().filter(|t| !sub_list.iter().any(|s| &s.topic == *t)).cloned().collect();
        for topic in stale {
            if let Some(old) = self.subscription_table.remove(&topic) {
                changes.push(TableChange::Removed { old });
                updated = true;
            }
        }
        (updated, changes)
    }

    /// `getAllClientId`: one id per channel (duplicates possible).
    pub fn all_client_ids(&self) -> Vec<String> {
        self.channels.iter().map(|c| c.client_id.clone()).collect()
    }

    /// Removes a channel; true if it was present.
    pub fn remove_channel(&mut self, channel: &str) -> bool {
        let before = self.channels.len();
        self.channels.retain(|c| c.channel != channel);
        before != self.channels.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::filterapi::build_subscription_data;
    use super::*;

    fn sub(topic: &str, expr: &str, v: u64) -> SubscriptionData {
        build_subscription_data(topic, Some(expr), v).unwrap()
    }

    #[test]
    fn newer_version_overwrites_silently() {
        let mut g = ConsumerGroupInfo::default();
        assert!(g.update_subscription(&[sub("T", "TagA", 10)]).0);
        let (updated, changes) = g.update_subscription(&[sub("T", "TagB", 20)]);
        assert!(!updated);
        assert!(matches!(changes[0], TableChange::Overwritten { .. }));
        assert_eq!(&*g.subscription_table["T"].sub_string, "TagB");
        let (updated, _) = g.update_subscription(&[sub("T", "TagA", 15)]);
        assert!(!updated);
        assert_eq!(&*g.subscription_table["T"].sub_string, "TagB");
    }

    #[test]
    fn missing_topics_are_removed() {
        let mut g = ConsumerGroupInfo::default();
        g.update_subscription(&[sub("A", "*", 1)]);
        let (updated, changes) = g.update_subscription(&[sub("B", "*", 1)]);
        assert!(updated);
        assert_eq!(changes.len(), 2);
        assert!(!g.subscription_table.contains_key("A"));
    }
}
