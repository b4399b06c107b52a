//! User and timeline commands: start, stop, crash, add, subscribe, queue counts, strategies.

use super::*;

impl World {
    pub(super) fn handle_command_now(&mut self, cmd: scenario::Action) {
        let text = describe_action(&cmd);
        self.emit(Event::Command { text });
        match cmd {
            scenario::Action::StartConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.start_consumer(c);
                }
            }
            scenario::Action::StopConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.stop_consumer(c, true);
                }
            }
            scenario::Action::CrashConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.stop_consumer(c, false);
                }
            }
            scenario::Action::AddConsumer { group, consumer } => {
                if self.find_consumer(&consumer.client_id).is_some() {
                    return;
                }
                let mut made = Self::make_consumer(&self.scenario, &group, &consumer);
                // A consumer added later adopts the group's current strategy.
                if let Some(other) = self.consumers.iter().find(|x| *x.group == *group) {
                    made.strategy = other.strategy.clone();
                    made.strategy_name = other.strategy_name;
                }
                self.group_models.entry(group.clone()).or_insert(made.model);
                self.consumers.push(made);
                let c = self.consumers.len() - 1;
                if consumer.start_at.is_some() {
                    self.start_consumer(c);
                }
            }
            scenario::Action::Subscribe { client_id, subscription } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    let spec = &mut self.consumers[c].spec;
                    spec.subscriptions.retain(|s| s.topic != subscription.topic);
                    spec.subscriptions.push(subscription.clone());
                    if self.consumers[c].running {
                        self.subscribe(c, &subscription);
                        self.send_heartbeat(c);
                    }
                }
            }
            scenario::Action::Unsubscribe { client_id, topic } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.consumers[c].spec.subscriptions.retain(|s| s.topic != topic);
                    self.consumers[c].subs.remove(&topic);
                }
            }
            scenario::Action::SetQueueCount { topic, queues } => {
                for b in 0..self.brokers.len() {
                    if self.brokers[b].topics.contains_key(&topic) {
                        self.brokers[b].set_queue_count(&topic, queues);
                        self.assign_partition_ids(b, &topic);
                    }
                }
                self.emit(Event::QueueCountChanged { topic: name(&topic), queues });
            }
            scenario::Action::Produce { producer, send } => {
                if let Some(p) = self.producers.iter().position(|x| *x.id == *producer) {
                    let ps = &mut self.producers[p];
                    ps.send_topics.push(name(&send.topic));
                    ps.send_tags.push(send.tag.as_deref().map(name));
                    ps.send_bodies.push(name(&send.body));
                    let count = send.count;
                    ps.sends.push(Arc::new(send));
                    let s = ps.sends.len() - 1;
                    if count > 0 {
                        self.schedule(0, Action::ProduceNext { producer: p, send: s, i: 0 });
                    }
                }
            }
            scenario::Action::SetAllocation { group, allocation } => {
                let strategy = strategy_from(&allocation);
                for c in self.consumers.iter_mut().filter(|c| *c.group == *group) {
                    c.strategy = strategy.clone();
                    c.strategy_name = allocation.name();
                }
            }
        }
    }

    pub(super) fn subscribe(&mut self, c: usize, s: &SubscriptionSpec) {
        let now = self.now;
        let sd = match filterapi::build(&s.topic, Some(&s.expression), s.expression_type.as_deref(), now) {
            Ok(sd) => sd,
            Err(e) => {
                // The real client throws from subscribe(); the subscription is simply not added.
                let client = self.consumers[c].client_id.clone();
                self.emit(Event::AllocateFailed { client, topic: name(&s.topic), reason: format!("subscribe rejected: {e}") });
                return;
            }
        };
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::Subscribed { client, topic: name(&s.topic), expression: s.expression.clone(), sub_version: now });
        self.consumers[c].subs.insert(s.topic.clone(), sd);
    }

    /// `MQClientInstance.checkClientInBroker` (CHECK_CLIENT_CONFIG): a non-TAG subscription must
    /// compile on every broker of its topic, and needs `enablePropertyFilter=true`, or start fails.
    pub(super) fn check_client_in_broker(&self, c: usize) -> Result<(), String> {
        for s in &self.consumers[c].spec.subscriptions {
            let Some(t) = s.expression_type.as_deref() else { continue };
            for b in self.brokers.iter().filter(|b| b.topics.contains_key(&s.topic)) {
                if !b.enable_property_filter {
                    return Err(format!(
                        "{} does not support {t} filtering (enablePropertyFilter=false), so subscribing {} with {:?} makes start() throw",
                        b.name, s.topic, s.expression
                    ));
                }
                if let Err(e) = crate::sim::rocketmq::sql92::compile(&s.expression, b.filter_manager.config().sql92_version) {
                    return Err(format!("{} rejects the {t} expression for {}: {e}", b.name, s.topic));
                }
            }
        }
        Ok(())
    }

    pub(super) fn start_consumer(&mut self, c: usize) {
        if self.consumers[c].running {
            return;
        }
        if let Err(reason) = self.check_client_in_broker(c) {
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].start_error = Some(reason.clone());
            self.emit(Event::StartFailed { client, reason });
            return;
        }
        self.consumers[c].start_error = None;
        let now = self.now;
        {
            let con = &mut self.consumers[c];
            con.running = true;
            con.incarnation += 1;
            con.started_at = now;
            con.channel = name(&format!("{}#{}", con.client_id, con.incarnation));
            con.subs.clear();
            con.pqs.clear();
            con.offsets.clear();
            con.routes.clear();
        }
        let inc = self.consumers[c].incarnation;
        let channel = self.consumers[c].channel.clone();
        self.channel_owner.insert(channel.clone(), (c, inc));
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::ConsumerStarted { client, channel });
        let subs = self.consumers[c].spec.subscriptions.clone();
        for s in &subs {
            self.subscribe(c, s);
        }
        if self.consumers[c].model == MessageModel::Clustering {
            let rt = retry_topic(&self.consumers[c].group);
            let sd = filterapi::build_subscription_data(&rt, Some("*"), now).expect("'*' always parses");
            self.consumers[c].subs.insert(rt, sd);
        }
        self.refresh_routes(c);
        self.send_heartbeat(c);
        self.rebalance_immediately(c);
        self.schedule(FIRST_HEARTBEAT_DELAY, Action::HeartbeatTick { c, inc });
        self.schedule(FIRST_PERSIST_DELAY, Action::PersistTick { c, inc });
        self.schedule(ROUTE_REFRESH_INTERVAL, Action::RouteRefresh { c, inc });
        if self.consumers[c].orderly {
            self.schedule(LOCK_RENEW_INTERVAL, Action::LockRenew { c, inc });
        }
    }

    pub(super) fn stop_consumer(&mut self, c: usize, graceful: bool) {
        if !self.consumers[c].running {
            return;
        }
        if graceful {
            self.persist_offsets(c);
            let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
            for mq in mqs {
                self.unlock_queue(c, &mq);
            }
            let (channel, group, client, latency) = {
                let con = &self.consumers[c];
                (con.channel.clone(), con.group.clone(), con.client_id.clone(), con.latency)
            };
            for b in 0..self.brokers.len() {
                self.schedule(
                    latency,
                    Action::UnregisterArrive {
                        broker: b,
                        channel: channel.clone(),
                        group: group.clone(),
                        client: client.clone(),
                    },
                );
            }
        }
        let con = &mut self.consumers[c];
        con.running = false;
        con.crashed = !graceful;
        for pq in con.pqs.values_mut() {
            pq.dropped = true;
        }
        con.pqs.clear();
        let client = con.client_id.clone();
        self.emit(Event::ConsumerStopped { client, graceful });
    }
}

fn describe_action(a: &scenario::Action) -> String {
    use scenario::Action::*;
    match a {
        StartConsumer { client_id } => format!("startConsumer {client_id}"),
        StopConsumer { client_id } => format!("stopConsumer {client_id}"),
        CrashConsumer { client_id } => format!("crashConsumer {client_id}"),
        AddConsumer { group, consumer } => format!("addConsumer {} to {group}", consumer.client_id),
        Subscribe { client_id, subscription } => {
            format!("subscribe {client_id} {}={:?}", subscription.topic, subscription.expression)
        }
        Unsubscribe { client_id, topic } => format!("unsubscribe {client_id} {topic}"),
        SetQueueCount { topic, queues } => format!("setQueueCount {topic}={queues}"),
        SetAllocation { group, allocation } => format!("setAllocation {group}={}", allocation.name()),
        Produce { producer, send } => {
            format!(
                "produce {producer} {}x {} tag={} every {} ms",
                send.count,
                send.topic,
                send.tag.as_deref().unwrap_or("-"),
                send.interval_ms
            )
        }
    }
}
