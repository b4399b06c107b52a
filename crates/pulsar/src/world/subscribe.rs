//! Consumers connecting and leaving: the client opens one v4 consumer per partition (or
//! segment), the broker creates the subscription's cursor (initial position applies only then),
//! checks the subscription type, builds the dispatcher the first consumer asks for and adds the
//! consumer to it. Closing flushes grouped acks; a crash loses them. Either way the broker
//! returns the consumer's unacked messages for redelivery.

use std::collections::BTreeMap;

use super::{Action, Attachment, ClientState, Dispatcher, Member, Subscription, TopicRole, World};
use crate::cursor::{default_dead_letter_topic, AckTimeoutTracker};
use crate::cursor::{DeadLetterPolicy, InitialPosition, ManagedCursor, NackDelay, NegativeAcksTracker};
use crate::defaults::MAX_TOTAL_RECEIVER_QUEUE_SIZE_ACROSS_PARTITIONS;
use crate::events::{Event, Name};
use crate::failover::{ActivePickConfig, FailoverMember, SingleActiveDispatcher, SingleActiveMode};
use crate::key_shared::{JoinContext, KeySharedConfig, KeySharedDispatcher, StickyKeySelector};
use crate::scalable::queue_segments;
use crate::scenario::ScalableConsumerType;
use crate::shared_dispatch::{SharedConsumer, SharedDispatchLimits};
use crate::shared_subscription::SharedSubscription;
use crate::subscription::{self, Connecting, ExistingDispatcher, KeySharedMode, KeySharedPolicy, SubscriptionType};

impl World {
    /// (Re)starts a consumer: one v4 consumer per partition, per segment (QUEUE), or a
    /// registration with the coordinator (STREAM).
    pub(super) fn start_consumer(&mut self, c: u32) {
        if !self.begin_incarnation(c) {
            return;
        }
        let con = &self.consumers[c as usize];
        let (topic, subscription) = (con.topic, con.subscription.clone());
        let spec = con.spec.clone();
        self.emit(Event::ConsumerStarted { consumer: c });
        match spec.scalable_type() {
            Some(ScalableConsumerType::Stream) => self.stream_register(c),
            Some(ScalableConsumerType::Queue) => {
                self.ensure_scalable_subscription(topic, &subscription, spec.initial_position);
                let era = self.scenario.config.queue_era;
                let scalable = self.topics[topic as usize].scalable.as_ref().expect("QUEUE consumers read scalable topics");
                let targets: Vec<u32> = queue_segments(&scalable.layout, era)
                    .iter()
                    .filter_map(|s| scalable.segment_partitions.get(s).copied())
                    .collect();
                for p in targets {
                    self.attach(c, p);
                }
            }
            None => {
                // A partitioned topic (or a retry topic beside it) takes a MultiTopicsConsumerImpl,
                // which refuses a zero receiver queue before it subscribes anything.
                if spec.receiver_queue_size == 0 && (self.topics[topic as usize].partitioned || spec.enable_retry) {
                    let reason = "Receiver queue size needs to be greater than 0 for Topics Consumer";
                    self.emit(Event::ClientError { consumer: c, reason: reason.into() });
                    self.fail_consumer(c, reason.to_string());
                    return;
                }
                let partitions = self.topics[topic as usize].partitions.clone();
                for p in partitions {
                    self.attach(c, p);
                }
            }
        }
        self.start_client_side(c);
    }

    /// A new incarnation of a consumer that is not running: its client state starts empty.
    /// False when it is running already.
    pub(super) fn begin_incarnation(&mut self, c: u32) -> bool {
        let con = &mut self.consumers[c as usize];
        if con.running() {
            return false;
        }
        con.state = ClientState::Running;
        con.failure = None;
        con.incarnation += 1;
        con.attachments.clear();
        con.incoming.clear();
        con.processing = None;
        con.pending_acks.clear();
        con.flush_scheduled = false;
        con.assigned_segments.clear();
        true
    }

    /// What a started client opens besides its topic: the retry topic, the ack-timeout ticks.
    pub(super) fn start_client_side(&mut self, c: u32) {
        let spec = self.consumers[c as usize].spec.clone();
        if spec.enable_retry {
            let retry = self.retry_partition(c);
            self.consumers[c as usize].retry_partition = Some(retry);
            self.attach(c, retry);
        }
        if spec.ack_timeout_ms > 0 {
            let con = &mut self.consumers[c as usize];
            con.ack_timeout_ticking = true;
            let inc = con.incarnation;
            self.schedule(crate::defaults::ACK_TIMEOUT_TICK_MS, Action::AckTimeoutTick { consumer: c, incarnation: inc });
        }
    }

    /// The consumer's retry-letter topic (created on first use, like auto topic creation).
    fn retry_partition(&mut self, c: u32) -> u32 {
        let con = &self.consumers[c as usize];
        let base = self.topics[con.topic as usize].name.clone();
        let name = con
            .spec
            .dead_letter
            .as_ref()
            .and_then(|d| d.retry_letter_topic.as_deref())
            .map(crate::scenario::topic_name_get)
            .unwrap_or_else(|| crate::cursor::default_retry_letter_topic(&base, &con.subscription));
        self.internal_topic(&name, TopicRole::Retry)
    }

    /// A dead-letter or retry topic by name, created non-partitioned on first use.
    pub(super) fn internal_topic(&mut self, full_name: &str, role: TopicRole) -> u32 {
        if let Some(t) = self.topics.iter().position(|t| &*t.name == full_name) {
            return self.topics[t].partitions[0];
        }
        let t = self.topics.len() as u32;
        let p = self.create_partition(t, full_name, -1, None);
        self.topics.push(super::Topic {
            name: Name::from(full_name),
            written: full_name.to_string(),
            role,
            partitioned: false,
            partitions: vec![p],
            scalable: None,
        });
        p
    }

    /// The client opens a v4 consumer on one partition or segment; the broker hears of it after the latency.
    pub(super) fn attach(&mut self, c: u32, partition: u32) -> u32 {
        let a = self.open_attachment(c, partition);
        let con = &self.consumers[c as usize];
        let (inc, latency) = (con.incarnation, con.latency);
        self.schedule(latency, Action::SubscribeArrive { consumer: c, incarnation: inc, attachment: a });
        a
    }

    /// The client's side of a v4 consumer on `partition`, not yet subscribed.
    pub(super) fn open_attachment(&mut self, c: u32, partition: u32) -> u32 {
        let consumer_id = self.next_consumer_id;
        self.next_consumer_id += 1;
        let topic_partitions = {
            let con = &self.consumers[c as usize];
            let t = &self.topics[con.topic as usize];
            if t.partitioned {
                t.partitions.len() as u32
            } else {
                1
            }
        };
        let partition_name = self.partitions[partition as usize].name.clone();
        let topic_name = self.topics[self.consumers[c as usize].topic as usize].name.clone();
        let con = &mut self.consumers[c as usize];
        let spec = con.spec.clone();
        // A multi-topic consumer splits its receiver queue over the partitions.
        let receiver_queue =
            spec.receiver_queue_size.min(MAX_TOTAL_RECEIVER_QUEUE_SIZE_ACROSS_PARTITIONS / topic_partitions.max(1));
        // With retry enabled the names derive from the consumer's topic; otherwise each partition
        // consumer derives them from its own topic (`...-partition-N-<sub>-DLQ`).
        let base = if spec.enable_retry { topic_name } else { partition_name };
        let dead_letter = spec.dead_letter.as_ref().and_then(|d| {
            let mut policy = DeadLetterPolicy::new(d.max_redeliver_count, &base, &spec.subscription).ok()?;
            if let Some(t) = &d.dead_letter_topic {
                policy.dead_letter_topic = crate::scenario::topic_name_get(t);
            }
            Some(policy)
        });
        con.attachments.push(Attachment {
            partition,
            subscription: u32::MAX,
            consumer_id,
            receiver_queue,
            taken_since_flow: 0,
            epoch: 0,
            connected: false,
            closed: false,
            reached_end: false,
            nacks: NegativeAcksTracker::new(NackDelay::Fixed(spec.nack_delay_ms)),
            nack_timer: false,
            ack_timeout: AckTimeoutTracker::new(spec.ack_timeout_ms).ok().flatten(),
            batch_left: BTreeMap::new(),
            receipts: 0,
            dead_letter_candidates: Default::default(),
            dead_letter,
        });
        con.attachments.len() as u32 - 1
    }

    /// The subscription named `name` on `partition`, created with its cursor at `initial` when new.
    pub(super) fn ensure_subscription(&mut self, partition: u32, name: &Name, initial: InitialPosition) -> u32 {
        if let Some(s) = self.partitions[partition as usize].subscription(name) {
            return s as u32;
        }
        let topic = self.partitions[partition as usize].topic;
        let group = self.group_of(topic, name);
        let part = &self.partitions[partition as usize];
        let cursor = ManagedCursor::create(initial, 0, part.last_entry());
        // The subscription is pushed right below, at this index.
        let sub = part.subscriptions.len() as u32;
        let event = self.emit(Event::CursorCreated {
            partition,
            sub,
            initial,
            mark_delete: cursor.mark_delete(),
            backlog: u32::try_from(cursor.backlog()).unwrap_or(u32::MAX),
        });
        let initial_mark_delete = cursor.mark_delete();
        self.push_subscription(partition, name, group, cursor, initial_mark_delete, event)
    }

    /// The group (`View::groups` entry) of subscription `name` on `topic`, registered on first use.
    pub(super) fn group_of(&mut self, topic: u32, name: &Name) -> u32 {
        match self.groups.iter().position(|(t, n)| *t == topic && n == name) {
            Some(g) => g as u32,
            None => {
                self.groups.push((topic, name.clone()));
                self.groups.len() as u32 - 1
            }
        }
    }

    /// Adds a subscription with `cursor` to `partition`; its index.
    pub(super) fn push_subscription(
        &mut self,
        partition: u32,
        name: &Name,
        group: u32,
        cursor: ManagedCursor,
        initial_mark_delete: i64,
        created_event: mqviz_engine::EventId,
    ) -> u32 {
        let part = &mut self.partitions[partition as usize];
        part.subscriptions.push(Subscription {
            name: name.clone(),
            group,
            initial_mark_delete,
            read_before_snapshot: None,
            cursor,
            created_event,
            sub_type: SubscriptionType::Exclusive,
            key_shared: KeySharedPolicy::default(),
            dispatcher: None,
            members: mqviz_engine::IdMap::new(),
            redelivery: Default::default(),
            read_at: None,
            held: BTreeMap::new(),
            delayed: Default::default(),
            last_sent: -1,
        });
        part.subscriptions.len() as u32 - 1
    }

    pub(super) fn new_dispatcher(&self, partition: u32, ty: SubscriptionType, policy: KeySharedPolicy) -> Dispatcher {
        let config = &self.scenario.config;
        let part = &self.partitions[partition as usize];
        match ty {
            SubscriptionType::Exclusive | SubscriptionType::Failover => {
                let mode =
                    if ty == SubscriptionType::Exclusive { SingleActiveMode::Exclusive } else { SingleActiveMode::Failover };
                let pick = ActivePickConfig {
                    partition_index: part.partition_index,
                    topic_name: part.name.to_string(),
                    consistent_hashing_for_partitions: config.failover_consistent_hashing,
                    era: config.failover_era,
                };
                let mut d = SingleActiveDispatcher::new(mode, pick);
                d.failover_delay_ms = config.failover_delay_ms;
                Dispatcher::Single(d)
            }
            SubscriptionType::Shared => Dispatcher::Shared(SharedSubscription::new(SharedDispatchLimits {
                max_round_robin_batch: config.round_robin_batch,
                max_unacked_per_consumer: config.max_unacked_per_consumer,
                max_unacked_per_subscription: config.max_unacked_per_subscription,
            })),
            SubscriptionType::KeyShared => {
                let selector = StickyKeySelector::for_mode(
                    policy.mode,
                    config.key_shared_consistent_hashing,
                    config.key_shared_replica_points,
                );
                let ks_config = KeySharedConfig {
                    allow_out_of_order_delivery: policy.allow_out_of_order_delivery,
                    classic: config.key_shared_classic,
                    look_ahead_per_consumer: config.look_ahead_per_consumer,
                    look_ahead_per_subscription: config.look_ahead_per_subscription,
                    unblocking_interval_ms: config.unblocking_interval_ms,
                    max_unacked_per_consumer: config.max_unacked_per_consumer,
                };
                Dispatcher::KeyShared(Box::new(KeySharedDispatcher::new(selector, ks_config)))
            }
        }
    }

    /// The broker handles a subscribe: cursor, type check, dispatcher, membership.
    pub(super) fn handle_subscribe(&mut self, c: u32, incarnation: u32, a: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let con = &self.consumers[c as usize];
        let Some(att) = con.attachments.get(a as usize).filter(|x| !x.closed) else { return };
        let (partition, consumer_id) = (att.partition, att.consumer_id);
        let spec = con.spec.clone();
        let (name, sub_name, latency) = (con.name.clone(), con.subscription.clone(), con.latency);
        let reply = |w: &mut World, error: Option<String>, subscription: u32| {
            w.schedule(latency, Action::SubscribeResult { consumer: c, incarnation, attachment: a, subscription, error });
        };
        if self.partitions[partition as usize].deleted {
            reply(self, Some("TopicNotFoundException: the segment was pruned".into()), u32::MAX);
            return;
        }
        let s = self.ensure_subscription(partition, &sub_name, spec.initial_position);
        let policy = key_shared_policy(&spec);
        let ty = spec.subscription_type();
        let sub = &self.partitions[partition as usize].subscriptions[s as usize];
        let existing = sub.dispatcher.as_ref().map(|_| ExistingDispatcher {
            subscription_type: sub.sub_type,
            key_shared: sub.key_shared,
            connected_consumers: sub.members.len() as u32,
        });
        if let Err(e) = subscription::subscribe(existing, Connecting { subscription_type: ty, key_shared: policy }) {
            reply(self, Some(e.to_string()), s);
            return;
        }
        self.admit_member(partition, s, (ty, policy), consumer_id, c, a);
        let added = self.add_to_dispatcher(partition, s, consumer_id, &name, &spec);
        match added {
            Err(reason) => {
                self.partitions[partition as usize].subscriptions[s as usize].members.remove(&consumer_id);
                reply(self, Some(reason), s);
            }
            Ok(after_subscribe) => {
                self.emit(Event::Subscribed { consumer: c, partition, sub: s, sub_type: ty, consumer_id });
                if ty == SubscriptionType::Shared {
                    let group = self.partitions[partition as usize].subscriptions[s as usize].group;
                    let what = format!("{} (Shared member)", self.partitions[partition as usize].name);
                    self.record_owner(group, what, Some(name));
                }
                after_subscribe(self);
                reply(self, None, s);
            }
        }
    }

    /// Makes consumer `c` (attachment `a`) a member of subscription `s`; the first member sets the
    /// subscription's type and Key_Shared policy and gets its dispatcher built.
    pub(super) fn admit_member(
        &mut self,
        partition: u32,
        s: u32,
        (ty, policy): (SubscriptionType, KeySharedPolicy),
        consumer_id: u64,
        c: u32,
        a: u32,
    ) {
        if self.partitions[partition as usize].subscriptions[s as usize].members.is_empty() {
            let d = self.new_dispatcher(partition, ty, policy);
            let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
            sub.dispatcher = Some(d);
            sub.sub_type = ty;
            sub.key_shared = policy;
        }
        let member = Member { consumer: c, attachment: a, permits: 0, epoch: 0, end_of_topic_sent: false };
        self.partitions[partition as usize].subscriptions[s as usize].members.insert(consumer_id, member);
    }

    /// Adds a consumer to the subscription's dispatcher. On success returns what to do once the
    /// consumer is announced (a Failover switch, Key_Shared range changes).
    #[allow(clippy::type_complexity)]
    pub(super) fn add_to_dispatcher(
        &mut self,
        partition: u32,
        s: u32,
        consumer_id: u64,
        name: &Name,
        spec: &crate::scenario::ConsumerSpec,
    ) -> Result<Box<dyn FnOnce(&mut World)>, String> {
        let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
        match sub.dispatcher.as_mut() {
            Some(Dispatcher::Single(d)) => {
                let member = FailoverMember { consumer_id, name: name.to_string(), priority: spec.priority_level };
                let effects = d.add(member).map_err(|e| e.to_string())?;
                Ok(Box::new(move |w: &mut World| w.apply_single_effects(partition, s, effects)))
            }
            Some(Dispatcher::Shared(sh)) => {
                sh.add_consumer(SharedConsumer::new(consumer_id, spec.priority_level, 0));
                Ok(Box::new(|_| {}))
            }
            Some(Dispatcher::KeyShared(ks)) => {
                let before = ks.selector.assignments();
                let ranges = spec.key_shared().filter(|k| k.mode == KeySharedMode::Sticky).map(|k| k.ranges.clone());
                // Classic (4.0, PIP-282): a newcomer is limited to entries before the last sent one.
                let since_first_unacked = (sub.cursor.read_position() - sub.cursor.mark_delete() - 1).max(0) as u64;
                let join = JoinContext::from_last_sent_position(sub.last_sent, since_first_unacked);
                let draining_before = ks.draining.len();
                if let Err(error) = ks.add_consumer(consumer_id, name, ranges.as_deref(), 0, join) {
                    return Err(self.key_shared_error_text(partition, s, error));
                }
                let changes =
                    super::ranges::changed(&before, &ks.selector.assignments(), super::ranges::Membership::Joined(consumer_id));
                let newly_draining = ks.draining.len().saturating_sub(draining_before);
                Ok(Box::new(move |w: &mut World| w.report_range_changes(partition, s, changes, newly_draining)))
            }
            None => Err("no dispatcher".into()),
        }
    }

    /// The exception a refused Key_Shared subscribe reports, naming a conflicting consumer by its
    /// name (upstream prints the `Consumer`, whose text includes `consumerName`).
    fn key_shared_error_text(&self, partition: u32, s: u32, error: crate::key_shared::KeySharedError) -> String {
        match error {
            crate::key_shared::KeySharedError::RangeConflict { consumer } => {
                let sub = &self.partitions[partition as usize].subscriptions[s as usize];
                let owner = sub
                    .members
                    .get(&consumer)
                    .map_or_else(|| consumer.to_string(), |m| self.consumers[m.consumer as usize].name.to_string());
                format!("ConsumerAssignException: Range conflict with consumer {owner}")
            }
            other => other.to_string(),
        }
    }

    /// Logs every consumer whose Key_Shared hash ranges changed, and the hashes now draining.
    pub(super) fn report_range_changes(
        &mut self,
        partition: u32,
        s: u32,
        changes: Vec<(u64, super::ranges::RangeSummary)>,
        newly_draining: usize,
    ) {
        let (topic, group) = {
            let p = &self.partitions[partition as usize];
            (p.name.clone(), p.subscriptions[s as usize].group)
        };
        for (id, summary) in changes {
            let Some(consumer) = self.member_consumer(partition, s, id) else { continue };
            let ranges = summary.text();
            self.emit(Event::HashRangesChanged { partition, sub: s, consumer, ranges: ranges.clone().into_boxed_str() });
            let name = self.consumers[consumer as usize].name.clone();
            self.record_owner(group, format!("{topic} hashes {ranges}"), Some(name));
        }
        if newly_draining > 0 {
            let draining: BTreeMap<u64, u32> = match &self.partitions[partition as usize].subscriptions[s as usize].dispatcher {
                Some(Dispatcher::KeyShared(ks)) => {
                    let mut m = BTreeMap::new();
                    for (_, e) in ks.draining.entries() {
                        *m.entry(e.consumer).or_insert(0) += 1;
                    }
                    m
                }
                _ => BTreeMap::new(),
            };
            for (id, hashes) in draining {
                if let Some(consumer) = self.member_consumer(partition, s, id) {
                    self.emit(Event::DrainingHashes { partition, sub: s, consumer, hashes });
                }
            }
        }
    }

    /// The client consumer (index) behind a broker consumer id on this subscription (its
    /// members first, then every attachment ever opened: the id may have just left).
    pub fn member_consumer(&self, partition: u32, s: u32, consumer_id: u64) -> Option<u32> {
        let sub = &self.partitions[partition as usize].subscriptions[s as usize];
        if let Some(m) = sub.members.get(&consumer_id) {
            return Some(m.consumer);
        }
        self.consumers.iter().position(|c| c.attachments.iter().any(|a| a.consumer_id == consumer_id)).map(|c| c as u32)
    }

    /// The name of `member_consumer`.
    pub fn member_consumer_name(&self, partition: u32, s: u32, consumer_id: u64) -> Option<Name> {
        self.member_consumer(partition, s, consumer_id).map(|c| self.consumers[c as usize].name.clone())
    }

    pub(super) fn record_owner(&mut self, group: u32, what: String, owner: Option<Name>) {
        let event = self.last_emitted.or(self.handler_cause).unwrap_or(mqviz_engine::EventId(0));
        self.owners.push(super::OwnerRecord { at: self.now, event, group, what, owner });
    }

    /// The client learns the outcome of its subscribe.
    pub(super) fn handle_subscribe_result(&mut self, c: u32, incarnation: u32, a: u32, s: u32, error: Option<String>) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let Some(att) = self.consumers[c as usize].attachments.get(a as usize) else { return };
        if att.closed {
            // Closed while subscribing (STREAM reassignment): leave again.
            if error.is_none() {
                let (partition, consumer_id, latency) = (att.partition, att.consumer_id, self.consumers[c as usize].latency);
                self.schedule(latency, Action::CloseArrive { partition, subscription: s, consumer_id });
            }
            return;
        }
        let partition = att.partition;
        match error {
            None => {
                let con = &mut self.consumers[c as usize];
                let att = &mut con.attachments[a as usize];
                att.connected = true;
                att.subscription = s;
                // A zero-queue consumer asks for one message at a time.
                let permits = att.receiver_queue.max(1);
                self.send_flow(c, a, permits);
            }
            Some(reason) => {
                let stream = self.consumers[c as usize].spec.scalable_type() == Some(ScalableConsumerType::Stream);
                self.emit(Event::SubscribeFailed { consumer: c, partition, reason: reason.clone().into_boxed_str() });
                if stream && reason.starts_with("ConsumerBusyException") {
                    // The previous owner of the segment has not let go yet: try again shortly.
                    let con = &mut self.consumers[c as usize];
                    con.attachments[a as usize].closed = true;
                    let segment = self.partitions[partition as usize].segment;
                    if segment.is_some_and(|seg| self.consumers[c as usize].assigned_segments.contains(&seg)) {
                        let inc = self.consumers[c as usize].incarnation;
                        let segments = self.consumers[c as usize].assigned_segments.clone();
                        self.schedule(
                            super::RESUBSCRIBE_DELAY,
                            Action::AssignmentArrive { consumer: c, incarnation: inc, segments },
                        );
                    }
                    return;
                }
                self.fail_consumer(c, reason);
            }
        }
    }

    /// Subscribing failed: the client gives up and closes what it had opened.
    fn fail_consumer(&mut self, c: u32, reason: String) {
        let latency = self.consumers[c as usize].latency;
        let con = &mut self.consumers[c as usize];
        con.state = ClientState::Failed;
        con.failure = Some(reason);
        let mut leaving = Vec::new();
        for att in con.attachments.iter_mut().filter(|a| !a.closed) {
            att.closed = true;
            if att.connected {
                leaving.push((att.partition, att.subscription, att.consumer_id));
            }
        }
        for (partition, subscription, consumer_id) in leaving {
            self.schedule(latency, Action::CloseArrive { partition, subscription, consumer_id });
        }
    }

    /// `close()` (grouped acks flushed first) or a crash (they are lost).
    pub(super) fn close_consumer(&mut self, c: u32, crashed: bool) {
        if !self.consumers[c as usize].running() {
            return;
        }
        let unsent = self.consumers[c as usize].pending_acks.len() as u32;
        if crashed {
            self.consumers[c as usize].pending_acks.clear();
        } else {
            self.flush_acks(c);
        }
        let latency = self.consumers[c as usize].latency;
        let con = &mut self.consumers[c as usize];
        con.state = if crashed { ClientState::Crashed } else { ClientState::Closed };
        con.incoming.clear();
        con.processing = None;
        let mut leaving = Vec::new();
        for att in con.attachments.iter_mut().filter(|a| !a.closed) {
            att.closed = true;
            if att.connected {
                leaving.push((att.partition, att.subscription, att.consumer_id));
            }
        }
        self.emit(Event::ConsumerClosed { consumer: c, crashed, unsent_acks: unsent });
        for (partition, subscription, consumer_id) in leaving {
            self.schedule(latency, Action::CloseArrive { partition, subscription, consumer_id });
        }
        if self.consumers[c as usize].spec.scalable_type() == Some(ScalableConsumerType::Stream) {
            self.stream_leave(c, crashed);
        }
    }

    /// The broker removes a consumer: its pending messages go back for redelivery; a Failover
    /// subscription picks again; when nobody is left, the replay set is dropped and the cursor
    /// rewound so the next consumer (of any type) reads every unacked entry.
    pub(super) fn handle_consumer_removed(&mut self, partition: u32, s: u32, consumer_id: u64) {
        let Some(sub) = self.partitions[partition as usize].subscriptions.get_mut(s as usize) else { return };
        let Some(member) = sub.members.remove(&consumer_id) else { return };
        let (mut returned, mut single_effects, mut ranges) = (None, None, None);
        match sub.dispatcher.as_mut() {
            Some(Dispatcher::Single(d)) => single_effects = Some(d.remove(consumer_id)),
            Some(Dispatcher::Shared(sh)) => returned = Some(sh.remove_consumer(consumer_id)),
            Some(Dispatcher::KeyShared(ks)) => {
                let before = ks.selector.assignments();
                let draining_before = ks.draining.len();
                returned = Some(ks.remove_consumer(consumer_id));
                let newly = ks.draining.len().saturating_sub(draining_before);
                let after = ks.selector.assignments();
                ranges = Some((super::ranges::changed(&before, &after, super::ranges::Membership::Left(consumer_id)), newly));
            }
            None => {}
        }
        let empty = sub.members.is_empty();
        let group = sub.group;
        let topic = self.partitions[partition as usize].name.clone();
        let event = self.emit(Event::ConsumerRemoved {
            consumer: member.consumer,
            partition,
            sub: s,
            consumer_id,
            returned: returned.as_ref().map(|r| r.len() as u32),
        });
        for p in returned.unwrap_or_default() {
            self.index_entry(partition, p, event);
        }
        if let Some((changes, newly)) = ranges {
            self.report_range_changes(partition, s, changes, newly);
        }
        if let Some(effects) = single_effects {
            self.apply_single_effects(partition, s, effects);
        }
        if matches!(self.partitions[partition as usize].subscriptions[s as usize].dispatcher, Some(Dispatcher::Shared(_))) {
            self.record_owner(group, format!("{topic} (Shared member left)"), None);
        }
        if empty {
            let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
            sub.dispatcher = None;
            sub.cursor.rewind();
            sub.redelivery = Default::default();
            sub.held.clear();
        } else {
            self.request_read(partition, s, 0);
        }
    }

    /// Links every message of an entry to an event.
    pub(super) fn index_entry(&mut self, partition: u32, entry: i64, event: mqviz_engine::EventId) {
        if !self.trace_messages {
            return;
        }
        let Some(e) = self.partitions[partition as usize].entries.get(entry as usize).copied() else { return };
        for m in e.first_msg..e.first_msg + e.messages {
            self.index_message(m, event);
        }
    }

    /// The default dead-letter topic name of an attachment.
    pub(super) fn dead_letter_topic_of(&self, c: u32, a: u32) -> String {
        let con = &self.consumers[c as usize];
        let att = &con.attachments[a as usize];
        att.dead_letter
            .as_ref()
            .map(|d| d.dead_letter_topic.clone())
            .unwrap_or_else(|| default_dead_letter_topic(&self.partitions[att.partition as usize].name, &con.subscription))
    }
}

/// The Key_Shared policy a consumer's subscribe carries (AUTO_SPLIT, in order, when it names none).
pub(super) fn key_shared_policy(spec: &crate::scenario::ConsumerSpec) -> KeySharedPolicy {
    KeySharedPolicy {
        mode: spec.key_shared().map_or(KeySharedMode::AutoSplit, |k| k.mode),
        allow_out_of_order_delivery: spec.key_shared().is_some_and(|k| k.allow_out_of_order_delivery),
    }
}
