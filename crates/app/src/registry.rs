//! The one place that knows every model: building one from a scenario, loading a run with its
//! edits, running and exporting it. Everything else holds a `Box<dyn Simulation>` (the seam,
//! `mqviz_model`); this module is in mqviz-app, above the model crates, because it names them all.

use serde_json::Value;

use mqviz_model::{BrokerKind, Simulation};

use crate::history::{Entered, History};
use mqviz_engine::json_path::{as_u64_in, parse_json, Errors, PathError};
use mqviz_engine::scenario::{broker_name, MAX_ENTITIES, MAX_TIME};
use mqviz_engine::Millis;

/// Parses scenario text and builds the model it names.
pub fn parse(text: &str) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    parse_value(&v)
}

/// Builds the model a parsed scenario document names.
pub fn parse_value(v: &Value) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let kind = kind_of(v).map_err(|e| vec![e])?;
    builder(kind)(v)
}

/// Builds one model's run from its parsed scenario document.
pub type Build = fn(&Value) -> Result<Box<dyn Simulation>, Vec<PathError>>;

/// The model a scenario document names (its `broker`, RocketMQ when absent).
pub fn kind_of(v: &Value) -> Result<BrokerKind, PathError> {
    let broker = broker_name(v);
    BrokerKind::from_name(broker).ok_or_else(|| {
        let known: Vec<&str> = BrokerKind::ALL.iter().map(|k| k.name()).collect();
        PathError {
            path: "$.broker".into(),
            message: format!("unknown broker model {broker:?} (expected one of: {})", known.join(", ")),
        }
    })
}

/// The builder of each model. The page does not call this: naming every builder would put every
/// model in its first download, so it takes them one by one (`ui::models`).
pub fn builder(kind: BrokerKind) -> Build {
    match kind {
        BrokerKind::RocketMq => build_rocketmq,
        BrokerKind::Kafka => build_kafka,
        BrokerKind::Pulsar => build_pulsar,
    }
}

pub fn build_rocketmq(v: &Value) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let s = mqviz_rocketmq::scenario::parse_scenario_value(v)?;
    Ok(Box::new(mqviz_rocketmq::world::World::new(s)))
}

pub fn build_kafka(v: &Value) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let s = mqviz_kafka::scenario::parse_scenario_value(v)?;
    Ok(Box::new(mqviz_kafka::world::World::new(s)))
}

pub fn build_pulsar(v: &Value) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let s = mqviz_pulsar::scenario::parse_scenario_value(v)?;
    Ok(Box::new(mqviz_pulsar::world::World::new(s)))
}

/// A scenario and the commands entered during an earlier run of it (its `edits`).
pub struct Loaded {
    pub sim: Box<dyn Simulation>,
    pub edits: Vec<Entered>,
}

/// Reads a scenario's `edits`: timeline entries entered during a run, each run after every other
/// event of its instant, as it was when entered. The array is removed from `v`; the model never
/// sees it. Shapes are checked here; each command is checked when it is entered.
fn take_edits(v: &mut Value, e: &mut Errors) -> Vec<Entered> {
    let Some(raw) = v.as_object_mut().and_then(|o| o.remove("edits")) else { return Vec::new() };
    let Value::Array(items) = raw else {
        e.push("$.edits", "expected an array of timeline entries");
        return Vec::new();
    };
    if items.len() > MAX_ENTITIES {
        e.push("$.edits", format!("too many entries ({}, at most {MAX_ENTITIES})", items.len()));
        return Vec::new();
    }
    let mut out: Vec<Entered> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("$.edits[{i}]");
        let Some(at) = item.get("at") else {
            e.push(&path, "expected a timeline entry with \"at\"");
            continue;
        };
        let Some(at) = as_u64_in(at, &format!("{path}.at"), 0, MAX_TIME, e) else { continue };
        if out.last().is_some_and(|l| l.at > at) {
            e.push(&format!("{path}.at"), "edits must be in time order");
        }
        out.push(Entered { at, command: item });
    }
    out
}

/// Parses a scenario with its `edits` (an exported run).
pub fn load(text: &str) -> Result<Loaded, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    load_value(v)
}

pub fn load_value(v: Value) -> Result<Loaded, Vec<PathError>> {
    load_value_with(v, parse_value)
}

/// `load_value` with the model built by `build` (the page passes the builders it has).
pub fn load_value_with(
    mut v: Value,
    build: impl FnOnce(&Value) -> Result<Box<dyn Simulation>, Vec<PathError>>,
) -> Result<Loaded, Vec<PathError>> {
    let mut e = Errors::default();
    let edits = take_edits(&mut v, &mut e);
    let sim = build(&v);
    match sim {
        Ok(sim) if e.is_empty() => Ok(Loaded { sim, edits }),
        Ok(_) => Err(e.list),
        Err(mut errs) => {
            errs.extend(e.list);
            Err(errs)
        }
    }
}

/// Parses a scenario, enters its edits at their instants, and runs to `until` (or to the last
/// edit, if later). An edit that cannot be entered is an error naming it.
pub fn run(text: &str) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let Loaded { mut sim, edits } = load(text)?;
    let end = edits.last().map(|c| c.at).unwrap_or(0).max(sim.until());
    let mut history = History::replay(edits);
    history.advance(&mut sim, end).map_err(|r| {
        r.errors
            .into_iter()
            .map(|pe| PathError { path: format!("$.edits[{}]", r.index), message: pe.message })
            .collect::<Vec<_>>()
    })?;
    Ok(sim)
}

/// The scenario `original` with the commands of a run as its `edits` and `until` set to `end`
/// (the playhead; 0 keeps the scenario's own): `run` of the result reproduces the run's event
/// log exactly as it stands at `end`.
pub fn export(original: &Value, commands: &[Entered], end: Millis) -> Value {
    let mut v = original.clone();
    if let Value::Object(o) = &mut v {
        if end > 0 {
            o.insert("until".into(), Value::from(end));
        }
        if commands.is_empty() {
            o.remove("edits");
        } else {
            o.insert("edits".into(), Value::Array(commands.iter().map(|c| c.command.clone()).collect()));
        }
    }
    v
}

/// Parses and runs a Pulsar scenario to its end; for tests that inspect the Pulsar world.
pub fn run_pulsar(text: &str) -> Result<mqviz_pulsar::world::World, Vec<PathError>> {
    let s = mqviz_pulsar::scenario::parse_scenario(text)?;
    let mut w = mqviz_pulsar::world::World::new(s);
    w.run_to_end();
    Ok(w)
}

/// Parses and runs a RocketMQ scenario to its end; for tests that inspect the RocketMQ world.
pub fn run_rocketmq(text: &str) -> Result<mqviz_rocketmq::world::World, Vec<PathError>> {
    let s = mqviz_rocketmq::scenario::parse_scenario(text)?;
    let mut w = mqviz_rocketmq::world::World::new(s);
    w.run_to_end();
    Ok(w)
}

/// The run report of any model's run, by its World: for the page's review, which has no
/// `Simulation::report` (the browser build leaves it out; only the comparison's split part calls
/// this, so the reports load with it).
pub fn report_of(sim: &dyn Simulation) -> Value {
    let any = sim.as_any();
    if let Some(w) = any.downcast_ref::<mqviz_rocketmq::world::World>() {
        return mqviz_rocketmq::report::report_json(w);
    }
    if let Some(w) = any.downcast_ref::<mqviz_kafka::world::World>() {
        return mqviz_kafka::report::report_json(w);
    }
    if let Some(w) = any.downcast_ref::<mqviz_pulsar::world::World>() {
        return mqviz_pulsar::report::report_json(w);
    }
    Value::Null
}
