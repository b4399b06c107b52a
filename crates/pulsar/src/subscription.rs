//! Subscription types and the rules that depend only on them (spec §1 preamble, §1.1, §2.2):
//! which consumer may join a subscription whose dispatcher already exists, and who may ack
//! cumulatively.

use std::fmt;

/// `SubscriptionType` (client) / `SubType` (broker).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SubscriptionType {
    #[default]
    Exclusive,
    Shared,
    Failover,
    KeyShared,
}

impl SubscriptionType {
    pub fn parse(name: &str) -> Option<SubscriptionType> {
        match name {
            "Exclusive" => Some(SubscriptionType::Exclusive),
            "Shared" => Some(SubscriptionType::Shared),
            "Failover" => Some(SubscriptionType::Failover),
            "Key_Shared" => Some(SubscriptionType::KeyShared),
            _ => None,
        }
    }

    /// The upstream enum constant, as it appears in messages.
    pub fn name(self) -> &'static str {
        match self {
            SubscriptionType::Exclusive => "Exclusive",
            SubscriptionType::Shared => "Shared",
            SubscriptionType::Failover => "Failover",
            SubscriptionType::KeyShared => "Key_Shared",
        }
    }

    /// One active consumer (Exclusive, Failover) rather than many (Shared, Key_Shared).
    pub fn is_single_active(self) -> bool {
        matches!(self, SubscriptionType::Exclusive | SubscriptionType::Failover)
    }
}

/// `KeySharedMode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeySharedMode {
    #[default]
    AutoSplit,
    Sticky,
}

impl KeySharedMode {
    pub fn parse(name: &str) -> Option<KeySharedMode> {
        match name {
            "AUTO_SPLIT" => Some(KeySharedMode::AutoSplit),
            "STICKY" => Some(KeySharedMode::Sticky),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KeySharedMode::AutoSplit => "AUTO_SPLIT",
            KeySharedMode::Sticky => "STICKY",
        }
    }
}

/// The Key_Shared policy a consumer connects with (`KeySharedMeta`, ranges aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeySharedPolicy {
    pub mode: KeySharedMode,
    pub allow_out_of_order_delivery: bool,
}

/// A consumer that connects to an existing subscription.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connecting {
    pub subscription_type: SubscriptionType,
    pub key_shared: KeySharedPolicy,
}

/// The subscription's current dispatcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExistingDispatcher {
    pub subscription_type: SubscriptionType,
    pub key_shared: KeySharedPolicy,
    pub connected_consumers: u32,
}

/// Broker-side rejections of a subscribe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubscribeError {
    DifferentType { active: SubscriptionType, connecting: SubscriptionType },
    DifferentKeySharedMode { active: KeySharedMode, connecting: KeySharedMode },
    OutOfOrderMismatch { active_allows: bool },
    ExclusiveConsumerConnected,
}

impl fmt::Display for SubscribeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const BUSY: &str = "SubscriptionBusyException: Subscription is of different type.";
        match self {
            SubscribeError::DifferentType { active, connecting } => write!(
                f,
                "{BUSY} Active subscription type of '{}' is different than the connecting consumer's type '{}'.",
                active.name(),
                connecting.name()
            ),
            SubscribeError::DifferentKeySharedMode { active, connecting } => write!(
                f,
                "{BUSY} Active subscription key_shared mode of '{}' is different than the connecting consumer's key_shared mode '{}'.",
                active.name(),
                connecting.name()
            ),
            SubscribeError::OutOfOrderMismatch { active_allows: true } => write!(
                f,
                "{BUSY} Active subscription allows out of order delivery while the connecting consumer does not allow it."
            ),
            SubscribeError::OutOfOrderMismatch { active_allows: false } => write!(
                f,
                "{BUSY} Active subscription does not allow out of order delivery while the connecting consumer allows it."
            ),
            SubscribeError::ExclusiveConsumerConnected => {
                write!(f, "ConsumerBusyException: Exclusive consumer is already connected")
            }
        }
    }
}

/// The dispatcher type after `connecting` subscribes. With no consumer connected the dispatcher
/// is replaced by the newcomer's type; otherwise types (and Key_Shared policies) must agree, and
/// Exclusive admits one consumer only.
pub fn subscribe(existing: Option<ExistingDispatcher>, connecting: Connecting) -> Result<SubscriptionType, SubscribeError> {
    let Some(existing) = existing.filter(|e| e.connected_consumers > 0) else {
        return Ok(connecting.subscription_type);
    };
    if existing.subscription_type != connecting.subscription_type {
        return Err(SubscribeError::DifferentType {
            active: existing.subscription_type,
            connecting: connecting.subscription_type,
        });
    }
    match existing.subscription_type {
        SubscriptionType::Exclusive => Err(SubscribeError::ExclusiveConsumerConnected),
        SubscriptionType::KeyShared if existing.key_shared.mode != connecting.key_shared.mode => {
            Err(SubscribeError::DifferentKeySharedMode {
                active: existing.key_shared.mode,
                connecting: connecting.key_shared.mode,
            })
        }
        SubscriptionType::KeyShared
            if existing.key_shared.allow_out_of_order_delivery != connecting.key_shared.allow_out_of_order_delivery =>
        {
            Err(SubscribeError::OutOfOrderMismatch { active_allows: existing.key_shared.allow_out_of_order_delivery })
        }
        other => Ok(other),
    }
}

/// `acknowledgeCumulative` is refused by the client on Shared and Key_Shared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CumulativeAckNotAllowed;

impl fmt::Display for CumulativeAckNotAllowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InvalidConfigurationException: Cannot use cumulative acks on a non-exclusive/non-failover subscription")
    }
}

pub fn check_cumulative_ack(subscription_type: SubscriptionType) -> Result<(), CumulativeAckNotAllowed> {
    if subscription_type.is_single_active() {
        Ok(())
    } else {
        Err(CumulativeAckNotAllowed)
    }
}

/// What a negative ack or ack timeout asks the broker to redeliver (spec §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedeliveryScope {
    /// Exclusive and Failover: `redeliverUnacknowledgedMessages()`, a cursor rewind, so every
    /// unacked message of the consumer comes again, in order.
    AllUnacked,
    /// Shared and Key_Shared: only the nacked or timed-out message ids; they may go to any consumer.
    OnlyThoseMessages,
}

pub fn redelivery_scope(subscription_type: SubscriptionType) -> RedeliveryScope {
    if subscription_type.is_single_active() {
        RedeliveryScope::AllUnacked
    } else {
        RedeliveryScope::OnlyThoseMessages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connecting(t: SubscriptionType) -> Connecting {
        Connecting { subscription_type: t, key_shared: KeySharedPolicy::default() }
    }

    fn existing(t: SubscriptionType, n: u32) -> Option<ExistingDispatcher> {
        Some(ExistingDispatcher { subscription_type: t, key_shared: KeySharedPolicy::default(), connected_consumers: n })
    }

    #[test]
    fn type_rules() {
        use SubscriptionType::*;
        assert_eq!(subscribe(existing(Exclusive, 0), connecting(Shared)), Ok(Shared));
        assert!(subscribe(existing(Exclusive, 1), connecting(Shared))
            .unwrap_err()
            .to_string()
            .ends_with("type of 'Exclusive' is different than the connecting consumer's type 'Shared'."));
        assert_eq!(subscribe(existing(Exclusive, 1), connecting(Exclusive)), Err(SubscribeError::ExclusiveConsumerConnected));
        assert_eq!(subscribe(existing(Failover, 2), connecting(Failover)), Ok(Failover));
        assert_eq!(subscribe(None, connecting(KeyShared)), Ok(KeyShared));
    }

    #[test]
    fn key_shared_policy_must_match() {
        let mut c = connecting(SubscriptionType::KeyShared);
        c.key_shared.mode = KeySharedMode::Sticky;
        let e = subscribe(existing(SubscriptionType::KeyShared, 1), c).unwrap_err();
        assert!(e
            .to_string()
            .contains("key_shared mode of 'AUTO_SPLIT' is different than the connecting consumer's key_shared mode 'STICKY'."));
        let mut c = connecting(SubscriptionType::KeyShared);
        c.key_shared.allow_out_of_order_delivery = true;
        let e = subscribe(existing(SubscriptionType::KeyShared, 1), c).unwrap_err();
        assert!(e.to_string().ends_with("does not allow out of order delivery while the connecting consumer allows it."));
    }

    #[test]
    fn cumulative_ack_only_on_single_active_types() {
        assert!(check_cumulative_ack(SubscriptionType::Failover).is_ok());
        assert!(check_cumulative_ack(SubscriptionType::KeyShared).is_err());
        assert_eq!(redelivery_scope(SubscriptionType::Exclusive), RedeliveryScope::AllUnacked);
        assert_eq!(redelivery_scope(SubscriptionType::Shared), RedeliveryScope::OnlyThoseMessages);
    }
}
