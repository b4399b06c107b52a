//! Exclusive and Failover: carrying out the dispatcher's decisions. A new active consumer is
//! announced at once; on Failover reading resumes only after `activeConsumerFailoverDelayTimeMillis`
//! (FLOW and redelivery requests are ignored meanwhile), then the cursor is rewound so every
//! unacked message goes to the new active consumer.

use super::{Dispatcher, World};
use crate::events::Event;
use crate::failover::SingleActiveEffect;

impl World {
    pub(super) fn apply_single_effects(&mut self, partition: u32, s: u32, effects: Vec<SingleActiveEffect>) {
        for effect in effects {
            match effect {
                SingleActiveEffect::TellNewcomer { consumer_id, active_consumer_id } => {
                    let (Some(consumer), Some(active)) =
                        (self.member_consumer(partition, s, consumer_id), self.member_consumer(partition, s, active_consumer_id))
                    else {
                        continue;
                    };
                    self.emit(Event::ActiveConsumerNotice { partition, sub: s, consumer, active });
                }
                SingleActiveEffect::Switch(switch) => {
                    if self.announce_active(partition, s, Some(switch.delay_ms)) {
                        if switch.delay_ms > 0 {
                            self.schedule(switch.delay_ms, super::Action::FailoverSwitch { partition, subscription: s });
                        } else {
                            self.finish_switch(partition, s);
                        }
                    }
                }
                SingleActiveEffect::SwitchAlreadyPending => {
                    self.announce_active(partition, s, None);
                }
            }
        }
    }

    /// Logs the dispatcher's new active consumer; false when there is none.
    pub(super) fn announce_active(&mut self, partition: u32, s: u32, delay_ms: Option<u64>) -> bool {
        let sub = &self.partitions[partition as usize].subscriptions[s as usize];
        let Some(Dispatcher::Single(d)) = &sub.dispatcher else { return false };
        let Some(active_id) = d.active else { return false };
        let Some(active) = self.member_consumer(partition, s, active_id) else { return false };
        self.emit(Event::ActiveConsumerPicked { partition, sub: s, active, delay_ms });
        let group = self.partitions[partition as usize].subscriptions[s as usize].group;
        let what = format!("{} (active consumer)", self.partitions[partition as usize].name);
        let name = self.consumers[active as usize].name.clone();
        self.record_owner(group, what, Some(name));
        true
    }

    /// The failover delay elapsed.
    pub(super) fn complete_failover_switch(&mut self, partition: u32, s: u32) {
        let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
        let Some(Dispatcher::Single(d)) = sub.dispatcher.as_mut() else { return };
        if !d.switch_pending {
            return;
        }
        d.complete_switch();
        self.finish_switch(partition, s);
    }

    /// Rewinds the cursor and reads for the consumer active now.
    fn finish_switch(&mut self, partition: u32, s: u32) {
        let sub = &self.partitions[partition as usize].subscriptions[s as usize];
        let Some(Dispatcher::Single(d)) = &sub.dispatcher else { return };
        let Some(active_id) = d.active else { return };
        let Some(active) = self.member_consumer(partition, s, active_id) else { return };
        let again = self.rewind(partition, s, None);
        let rewound_to = self.partitions[partition as usize].subscriptions[s as usize].cursor.mark_delete() + 1;
        let event = self.emit(Event::ActiveSwitched { partition, sub: s, active, rewound_to, redelivered: again.len() as u32 });
        for p in again {
            self.index_entry(partition, p, event);
        }
        self.request_read(partition, s, 0);
    }
}
