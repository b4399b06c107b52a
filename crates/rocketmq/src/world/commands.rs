//! User and timeline commands: start, stop, crash, add, subscribe, queue counts, strategies.

use super::records::DropReason;
use super::*;

impl World {
    pub(super) fn handle_command_now(&mut self, cmd: scenario::Action) {
        let text = describe_action(&cmd);
        self.emit(Event::Command { text });
        match cmd {
            scenario::Action::StartConsumer { consumer } => {
                if let Some(c) = self.find_consumer(&consumer) {
                    self.start_consumer(c);
                }
            }
            scenario::Action::StopConsumer { consumer } => {
                if let Some(c) = self.find_consumer(&consumer) {
                    self.stop_consumer(c, true);
                }
            }
            scenario::Action::CrashConsumer { consumer } => {
                if let Some(c) = self.find_consumer(&consumer) {
                    self.stop_consumer(c, false);
                }
            }
            scenario::Action::AddConsumer { group, consumer } => {
                if self.find_consumer(&consumer.name).is_some() {
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
            scenario::Action::Subscribe { consumer, subscription } => {
                if let Some(c) = self.find_consumer(&consumer) {
                    let spec = &mut self.consumers[c].spec;
                    spec.subscriptions.retain(|s| s.topic != subscription.topic);
                    spec.subscriptions.push(subscription.clone());
                    if self.consumers[c].running {
                        self.subscribe(c, &subscription);
                        self.send_heartbeat(c);
                    }
                }
            }
            scenario::Action::Unsubscribe { consumer, topic } => {
                if let Some(c) = self.find_consumer(&consumer) {
                    self.consumers[c].spec.subscriptions.retain(|s| s.topic != topic);
                    self.consumers[c].subs.remove(&topic);
                }
            }
            scenario::Action::SetQueueCount { topic, queues } => {
                // `mqadmin updateTopic`: on the brokers that have the topic, or on every broker
                // when none has it yet (the topic is created).
                let hosting: Vec<usize> =
                    (0..self.brokers.len()).filter(|&b| self.brokers[b].topics.contains_key(&topic)).collect();
                let targets = if hosting.is_empty() { (0..self.brokers.len()).collect() } else { hosting };
                for b in targets {
                    self.brokers[b].set_queue_count(&topic, queues);
                    self.assign_partition_ids(b, &topic);
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
                        self.schedule(0, Action::ProduceNext { producer: p as u32, send: s as u32, i: 0 });
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
        let now = self.sub_version_now();
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
        self.consumers[c].subs.insert(s.topic.clone(), Arc::new(sd));
    }

    /// `MQClientInstance.checkClientInBroker` (CHECK_CLIENT_CONFIG): every non-TAG subscription is
    /// sent to ONE broker of its topic, picked at random (`findBrokerAddrByTopic`); that broker
    /// needs `enablePropertyFilter=true` and must compile the expression. A topic without a route
    /// is not checked.
    pub(super) fn check_client_in_broker(&mut self, c: usize) -> Result<(), String> {
        let subs: Vec<SubscriptionSpec> = self.consumers[c].spec.subscriptions.clone();
        for s in &subs {
            let Some(t) = s.expression_type.as_deref() else { continue };
            let hosts: Vec<usize> = (0..self.brokers.len()).filter(|&b| self.brokers[b].topics.contains_key(&s.topic)).collect();
            if hosts.is_empty() {
                continue;
            }
            let pick = if hosts.len() > 1 { self.rng.below(hosts.len() as u64) as usize } else { 0 };
            let b = &self.brokers[hosts[pick]];
            if !b.enable_property_filter {
                return Err(format!(
                    "{} does not support {t} filtering (enablePropertyFilter=false), so subscribing {} with {:?} makes start() throw",
                    b.name, s.topic, s.expression
                ));
            }
            if let Err(e) = crate::sql92::compile(&s.expression, b.filter_manager.config().sql92_version) {
                return Err(format!("{} rejects the {t} expression for {}: {e}", b.name, s.topic));
            }
        }
        Ok(())
    }

    /// `DefaultMQPushConsumerImpl.start()`: the consumer is RUNNING (timers armed) before
    /// CHECK_CLIENT_CONFIG runs; only if the check passes does start() send a heartbeat and wake
    /// the rebalance. A failed check throws: the application shuts the consumer down, or ignores
    /// the exception and the consumer carries on from its timers (`onStartFailure`).
    pub(super) fn start_consumer(&mut self, c: usize) {
        if self.consumers[c].running {
            return;
        }
        self.begin_incarnation(c);
        let now = self.now;
        if let Err(reason) = self.check_client_in_broker(c) {
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].start_error = Some(reason.clone());
            let ignored = self.consumers[c].ignores_start_failure();
            self.emit(Event::StartFailed { client, reason, ignored });
            if ignored {
                // No heartbeat and no wake-up from start(): the timers and the RebalanceService
                // (first run after its 20 s wait, or a notification) carry on.
                self.arm_client_timers(c);
                self.schedule_rebalance_at(c, now + REBALANCE_INTERVAL);
            } else {
                self.stop_consumer(c, true);
            }
            return;
        }
        self.send_heartbeat(c);
        self.rebalance_immediately(c);
        self.arm_client_timers(c);
    }

    /// The part of `start()` before the broker hears of the consumer: a new incarnation RUNNING
    /// with its subscriptions (the retry topic's in CLUSTERING) and its topics' routes.
    pub(super) fn begin_incarnation(&mut self, c: usize) {
        self.consumers[c].start_error = None;
        let now = self.now;
        {
            let con = &mut self.consumers[c];
            con.running = true;
            con.crashed = false;
            con.incarnation = con.incarnation.next();
            con.started_at = now;
            con.channel = name(&format!("{}#{}", con.name, con.incarnation));
            con.subs.clear();
            con.pqs.clear();
            con.offsets.clear();
            con.routes.clear();
            // The RebalanceService is built with the client instance: its minInterval counts from now.
            con.rebalance = RebalanceService { last_run_at: now, ..RebalanceService::default() };
        }
        let channel = self.consumers[c].channel.clone();
        let inc = self.consumers[c].incarnation;
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
            self.consumers[c].subs.insert(rt, Arc::new(sd));
        }
        // updateTopicSubscribeInfoWhenSubscriptionChanged (checkClientInBroker comes next).
        self.refresh_routes(c);
    }

    /// `mQClientFactory.start()`: the scheduled tasks of the client instance.
    pub(super) fn arm_client_timers(&mut self, c: usize) {
        let inc = self.consumers[c].incarnation;
        self.schedule(FIRST_HEARTBEAT_DELAY, Action::ConsumerTimer { c: c as u32, inc, timer: ConsumerTimer::Heartbeat });
        self.schedule(FIRST_PERSIST_DELAY, Action::ConsumerTimer { c: c as u32, inc, timer: ConsumerTimer::Persist });
        self.schedule(ROUTE_REFRESH_INTERVAL, Action::ConsumerTimer { c: c as u32, inc, timer: ConsumerTimer::RouteRefresh });
        if self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering {
            self.schedule(FIRST_LOCK_RENEW_DELAY, Action::ConsumerTimer { c: c as u32, inc, timer: ConsumerTimer::LockRenew });
        }
    }

    /// Graceful (`shutdown()`): the consume service stops (orderly: unlockAll), offsets are
    /// persisted, the client unregisters, the ProcessQueues are dropped. Listeners already running
    /// still return, and their results are discarded. A crash does none of it, and its listeners die.
    pub(super) fn stop_consumer(&mut self, c: usize, graceful: bool) {
        if !self.consumers[c].running {
            return;
        }
        if graceful {
            if self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering {
                let mqs: Vec<MessageQueue> =
                    self.consumers[c].pqs.iter().filter(|(_, pq)| !pq.dropped).map(|(mq, _)| mq.clone()).collect();
                for mq in mqs {
                    self.unlock_queue_now(c, &mq);
                }
            }
            self.persist_offsets(c);
            let (channel, group, client, latency) = {
                let con = &self.consumers[c];
                (con.channel.clone(), con.group.clone(), con.client_id.clone(), con.latency)
            };
            for b in 0..self.brokers.len() {
                self.schedule(
                    latency,
                    Action::UnregisterArrive(Box::new(wide::UnregisterArrive {
                        broker: b,
                        channel: channel.clone(),
                        group: group.clone(),
                        client: client.clone(),
                    })),
                );
            }
        } else {
            let inc = self.consumers[c].incarnation;
            self.consumers[c].crashed_incarnations.push((inc, self.now));
        }
        let why = if graceful { DropReason::Shutdown } else { DropReason::Crash };
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            self.remove_process_queue(c, &mq, why);
        }
        let con = &mut self.consumers[c];
        con.running = false;
        con.crashed = !graceful;
        let client = con.client_id.clone();
        self.emit(Event::ConsumerStopped { client, graceful });
    }
}

fn describe_action(a: &scenario::Action) -> String {
    use scenario::Action::*;
    match a {
        StartConsumer { consumer } => format!("startConsumer {consumer}"),
        StopConsumer { consumer } => format!("stopConsumer {consumer}"),
        CrashConsumer { consumer } => format!("crashConsumer {consumer}"),
        AddConsumer { group, consumer } => format!("addConsumer {} to {group}", consumer.name),
        Subscribe { consumer, subscription } => {
            format!("subscribe {consumer} {}={:?}", subscription.topic, subscription.expression)
        }
        Unsubscribe { consumer, topic } => format!("unsubscribe {consumer} {topic}"),
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
