//! Heartbeats, the broker's consumer registry, notifications, unregister and channel expiry.

use super::*;

impl World {
    pub(super) fn send_heartbeat(&mut self, c: usize) {
        let subs: Vec<Arc<SubscriptionData>> = self.consumers[c].subs.values().cloned().collect();
        let (inc, latency) = (self.consumers[c].incarnation, self.consumers[c].latency);
        let summary = self.consumers[c].subscription_summary();
        let client = self.consumers[c].client_id.clone();
        for b in 0..self.brokers.len() {
            let broker = self.brokers[b].name.clone();
            self.emit(Event::HeartbeatSent { client: client.clone(), broker, subscriptions: summary.clone() });
            self.schedule(
                latency,
                Action::HeartbeatArrive(Box::new(wide::HeartbeatArrive { broker: b, c, inc, subs: subs.clone() })),
            );
        }
    }

    pub(super) fn handle_heartbeat(&mut self, b: usize, c: usize, inc: Incarnation, subs: Vec<Arc<SubscriptionData>>) {
        // A heartbeat already on the wire still arrives after a crash; only a newer incarnation supersedes it.
        if self.consumers[c].incarnation != inc {
            return;
        }
        if let Some(channels) = self.register_heartbeat(b, c, &subs, true) {
            self.notify_channels(&channels);
        }
    }

    /// What the broker does with a heartbeat (`ConsumerManager.registerConsumer`): the channel,
    /// the subscription table, the filter registry. Returns the channels to notify when the group
    /// changed (CLUSTERING only). A snapshot's restore registers its members without `live`: the
    /// group was already this way, so nobody is notified.
    pub(super) fn register_heartbeat(
        &mut self,
        b: usize,
        c: usize,
        subs: &[Arc<SubscriptionData>],
        live: bool,
    ) -> Option<Vec<Name>> {
        let subs: Vec<SubscriptionData> = subs.iter().map(|s| (**s).clone()).collect();
        let now = self.now;
        let (group, client, channel, model) = {
            let con = &self.consumers[c];
            (con.group.clone(), con.client_id.clone(), con.channel.clone(), con.model)
        };
        let rt = retry_topic(&group);
        if model == MessageModel::Clustering {
            self.brokers[b].ensure_topic(&rt, 1);
            self.assign_partition_ids(b, &rt);
        }
        let broker = &mut self.brokers[b];
        let info = broker.groups.entry(group.to_string()).or_default();
        info.message_model = Some(model);
        let r1 = info.update_channel(&channel, &client, now);
        let (r2, changes) = info.update_subscription(&subs);
        let notify = live && (r1 || r2) && model != MessageModel::Broadcasting;
        let mut texts = Vec::new();
        let mut hist = Vec::new();
        for ch in &changes {
            let (topic, change, old, new) = match ch {
                TableChange::Added { new } => (new.topic.clone(), "added", None, Some(new)),
                TableChange::Overwritten { old, new } => (new.topic.clone(), "overwritten", Some(old), Some(new)),
                TableChange::Removed { old } => (old.topic.clone(), "removed", Some(old), None),
                TableChange::KeptNewer { .. } => continue,
            };
            if new.is_some() {
                broker.table_writer.insert((group.to_string(), topic.clone()), client.clone());
            }
            texts.push(match (old, new) {
                (None, Some(n)) => format!("{topic} added {:?}@{}", n.sub_string, n.sub_version),
                (Some(o), Some(n)) => {
                    format!("{topic} {:?}@{} overwritten by {:?}@{}", o.sub_string, o.sub_version, n.sub_string, n.sub_version)
                }
                (Some(o), None) => format!("{topic} {:?}@{} removed", o.sub_string, o.sub_version),
                _ => continue,
            });
            hist.push(HistoryEntry {
                at: now,
                broker: broker.name.to_string(),
                topic,
                change,
                by_client: client.to_string(),
                old_expression: old.map(|o| o.sub_string.to_string()),
                old_sub_version: old.map(|o| o.sub_version),
                new_expression: new.map(|n| n.sub_string.to_string()),
                new_sub_version: new.map(|n| n.sub_version),
                event: 0,
            });
        }
        let channels: Vec<Name> = info.channels.iter().map(|ch| Name::from(ch.channel.as_str())).collect();
        let bname = broker.name.clone();
        let id = self.emit(Event::HeartbeatApplied { broker: bname, group: group.clone(), client, changes: texts, notify });
        for mut h in hist {
            h.event = id.0;
            self.history.entry(group.to_string()).or_default().push(h);
        }
        // REGISTER: the filter registry sees every heartbeat, and its cost is recorded.
        let broker = &mut self.brokers[b];
        let design = broker.filter_manager.design().name();
        let topics = &broker.topics;
        let cost = broker.filter_manager.register(&group, &subs, now.max(1), &|t| topics.contains_key(t));
        if cost.entries_touched > 0 || cost.topics_scanned > 0 || cost.compile_errors > 0 {
            broker.filter_costs.push(FilterCostSample { at: now, group: group.clone(), cost });
            let bname = broker.name.clone();
            self.emit(Event::FilterRegistered {
                broker: bname,
                group: group.clone(),
                client: self.consumers[c].client_id.clone(),
                design,
                cost: cost.to_string(),
            });
        }
        notify.then_some(channels)
    }

    /// NOTIFY_CONSUMER_IDS_CHANGED reaches a client: `rebalanceImmediately()`.
    pub(super) fn handle_notify(&mut self, c: usize, inc: Incarnation) {
        if self.consumer_alive(c, inc) {
            let (client, group) = (self.consumers[c].client_id.clone(), self.consumers[c].group.clone());
            self.emit(Event::NotifyReceived { client, group });
            self.rebalance_immediately(c);
        }
    }

    pub(super) fn handle_expiry_scan(&mut self, b: usize) {
        self.scan_expired_channels(b);
        self.schedule(EXPIRY_SCAN_INTERVAL, Action::ExpiryScan { broker: b });
    }

    pub(super) fn notify_channels(&mut self, channels: &[Name]) {
        for ch in channels {
            if let Some(&(c, inc)) = self.channel_owner.get(ch) {
                let latency = self.consumers[c].latency;
                self.schedule(latency, Action::NotifyArrive { c, inc });
            }
        }
    }

    pub(super) fn handle_unregister(&mut self, b: usize, channel: &str, group: &str, client: Name) {
        let model = self.group_models.get(group).copied().unwrap_or(MessageModel::Clustering);
        let broker = &mut self.brokers[b];
        let Some(info) = broker.groups.get_mut(group) else { return };
        if !info.remove_channel(channel) {
            return;
        }
        let channels: Vec<Name> = info.channels.iter().map(|ch| Name::from(ch.channel.as_str())).collect();
        if info.channels.is_empty() {
            broker.groups.remove(group);
            // UNREGISTER: the group's filter data is marked dead (still served, cleaned after 24 h).
            broker.filter_manager.unregister(group, self.now.max(1));
        }
        let notify = model != MessageModel::Broadcasting;
        let bname = broker.name.clone();
        self.emit(Event::Unregistered { broker: bname, group: name(group), client, notify });
        if notify {
            self.notify_channels(&channels);
        }
    }

    pub(super) fn scan_expired_channels(&mut self, b: usize) {
        let now = self.now;
        let mut expired = Vec::new();
        let broker = &mut self.brokers[b];
        for (group, info) in broker.groups.iter_mut() {
            let (gone, keep): (Vec<_>, Vec<_>) =
                info.channels.drain(..).partition(|ch| now.saturating_sub(ch.last_update) > CHANNEL_EXPIRED_TIMEOUT);
            info.channels = keep;
            for ch in gone {
                expired.push((group.clone(), ch));
            }
        }
        broker.groups.retain(|_, g| !g.channels.is_empty());
        broker.filter_manager.clean(now);
        let bname = broker.name.clone();
        for (group, ch) in expired {
            self.emit(Event::ChannelExpired {
                broker: bname.clone(),
                group: name(&group),
                client: name(&ch.client_id),
                channel: name(&ch.channel),
            });
        }
    }
}
