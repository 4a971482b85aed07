//! The operator contract lint (W0201): every admitted callback of a
//! provider with a contract (`reduce` and `segmented_reduce`: associative
//! and commutative, they combine in a tree; the scans: associative;
//! `sort_by`: a strict weak order) runs on the host over edge and
//! pseudo-random values of its element type, with the captures its caller's
//! seeded arguments give it (`hostref::run_contract`, `lint_shim`). A
//! violation is a warning with a counterexample; `--deny-warnings` makes it
//! an error. The result is cached by every byte that reaches it.

use frontend::pmir::PreparedMir;
use manifest::Provider;
use passes::admission::{self, Outcome, Verdict};
use passes::codes::Code;
use passes::diagnostic::Diagnostic;

use crate::hostref::{self, ContractFinding, ContractJob};
use crate::timings::Timings;

/// A provider's contract, as its warnings describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    /// How the provider uses the operation, for the warning's label.
    pub how: &'static str,
    /// Why breaking it matters, a note.
    pub consequence: &'static str,
    /// What to use instead, the help line.
    pub help: &'static str,
    /// What the operation is (`operation` or `comparator`).
    pub what: &'static str,
}

/// The contract of a provider's operation; `None` for a provider without
/// one (the maps and select).
pub fn laws(provider: Provider) -> Option<Contract> {
    const FOLD_HELP: &str = "use an associative and commutative operation (a wrapping sum, `min`, \
                             `max`, `&`, `|`, `^`, or a selection by a total order)";
    match provider {
        Provider::Reduce | Provider::SegmentedReduce => Some(Contract {
            how: "combines elements in a tree whose shape the GPU chooses",
            consequence: "the GPU's result can differ from the sequential host fold, and change \
                          with the input size",
            help: FOLD_HELP,
            what: "operation",
        }),
        Provider::InclusiveScan | Provider::ExclusiveScan => Some(Contract {
            how: "combines each prefix in a tree of tiles, in index order",
            consequence: "the GPU's prefixes can differ from the sequential host scan, and \
                          change with the input size",
            help: "use an associative operation (a wrapping sum, `min`, `max`, `&`, `|`, `^`; \
                   commutativity is not needed)",
            what: "operation",
        }),
        Provider::SortBy => Some(Contract {
            how: "orders elements by a merge sort",
            consequence: "the order the GPU's merge sort gives then depends on the algorithm \
                          and the input size, and need not be the host's",
            help: "compare by `<` (a strict order) on a key: `a < b`, `key(a) < key(b)`, \
                   never `<=`",
            what: "comparator",
        }),
        Provider::Transform | Provider::Transform2 | Provider::Select | Provider::Copy => None,
    }
}

/// What the lint found, as diagnostics, and the registrations it could not
/// check, each with why (their callers cannot be called by the harness).
pub struct Linted {
    pub warnings: Vec<Diagnostic>,
    pub unchecked: Vec<String>,
}

/// Runs the lint over the admitted registrations of `doc`.
pub fn lint(
    file: &std::path::Path,
    doc: &PreparedMir,
    outcomes: &[Outcome],
    device_inputs: &[backend_nvptx::LinkInput],
    cache: Option<&cache::Cache>,
    timings: &mut Timings,
) -> Result<Linted, String> {
    let mut jobs = Vec::new();
    let mut unchecked = Vec::new();
    for o in outcomes {
        let reg = &o.registration;
        if !matches!(o.verdict, Verdict::Admitted(_)) || laws(reg.provider).is_none() {
            continue;
        }
        let Some(caller) = doc.body(&reg.caller) else {
            unchecked.push(format!(
                "registration #{}: its caller has no body",
                reg.index
            ));
            continue;
        };
        match hostref::caller_arguments(doc, caller, 0x5EED + reg.index as u64) {
            Ok(arguments) => jobs.push(ContractJob {
                registration: reg.index,
                caller: reg.caller.clone(),
                call_index: hostref::call_index(doc, reg.index),
                arguments,
            }),
            Err(why) => unchecked.push(format!("registration #{}: {why}", reg.index)),
        }
    }
    if jobs.is_empty() {
        return Ok(Linted {
            warnings: Vec::new(),
            unchecked,
        });
    }
    let overflow = doc.source.overflow_checks.unwrap_or(true);
    let bytes = crate::buildcache::fetch(
        cache,
        timings,
        "operator contract (cache hit)",
        "contract",
        || {
            let mut parts: Vec<(&str, Vec<u8>)> = vec![
                (
                    "rustc",
                    doc.source.rustc.clone().unwrap_or_default().into_bytes(),
                ),
                ("overflow", vec![overflow as u8]),
                ("shim", crate::lint_shim::CONTRACT.as_bytes().to_vec()),
                ("jobs", format!("{jobs:?}").into_bytes()),
                (
                    "native",
                    frontend::bridge::NATIVE_SOURCE.as_bytes().to_vec(),
                ),
                (
                    "native gpu",
                    frontend::bridge::NATIVE_GPU_SOURCE.as_bytes().to_vec(),
                ),
                ("gen", manifest::GENERATOR_SOURCE.as_bytes().to_vec()),
            ];
            for (_, name, text) in doc.source.files() {
                parts.push(("file", name.as_bytes().to_vec()));
                parts.push(("text", text.unwrap_or("").as_bytes().to_vec()));
            }
            for d in device_inputs {
                parts.push(("library", d.bytes.clone()));
            }
            let refs: Vec<(&str, &[u8])> = parts.iter().map(|(n, b)| (*n, b.as_slice())).collect();
            crate::buildcache::key("contract", &refs)
        },
        |t| {
            t.time("operator contract (host)", || {
                hostref::run_contract(file, overflow, &jobs, device_inputs)
            })
            .map(|findings| encode(&findings))
        },
    )?;
    let findings = decode(&bytes)?;
    let warnings = findings
        .iter()
        .filter_map(|f| {
            let o = outcomes
                .iter()
                .find(|o| o.registration.index == f.registration)?;
            Some(warning(o, f))
        })
        .collect();
    Ok(Linted {
        warnings,
        unchecked,
    })
}

fn warning(o: &Outcome, f: &ContractFinding) -> Diagnostic {
    let reg = &o.registration;
    let contract = laws(reg.provider).unwrap_or(Contract {
        how: "combines elements",
        consequence: "",
        help: "",
        what: "operation",
    });
    let float = f.counterexample.contains('.') || f.counterexample.contains("NaN");
    let title = if contract.what == "comparator" {
        format!(
            "the comparator of this `{}` is not a strict weak order: it is not {}",
            reg.function, f.law
        )
    } else {
        format!(
            "the {} of this `{}` is not {}",
            contract.what, reg.function, f.law
        )
    };
    let mut d = Diagnostic::new(
        Code::OperatorContract,
        title,
        admission::label(reg.loc, format!("`{}` {}", reg.function, contract.how)),
    )
    .with_note(format!("on the host: {}", f.counterexample));
    if float && contract.what == "operation" {
        d = d.with_note(
            "floats are compared within 16 ulps of the largest magnitude among the operands and \
             results: this difference is larger than rounding explains",
        );
    }
    d.with_note(contract.consequence).with_help(contract.help)
}

fn encode(findings: &[ContractFinding]) -> Vec<u8> {
    let mut s = String::new();
    for f in findings {
        s.push_str(&format!(
            "{}\t{}\t{}\n",
            f.registration, f.law, f.counterexample
        ));
    }
    s.into_bytes()
}

fn decode(bytes: &[u8]) -> Result<Vec<ContractFinding>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "a cached contract result is not text")?;
    text.lines()
        .map(|l| {
            let mut p = l.splitn(3, '\t');
            match (p.next().and_then(|r| r.parse().ok()), p.next(), p.next()) {
                (Some(registration), Some(law), Some(c)) => Ok(ContractFinding {
                    registration,
                    law: law.to_string(),
                    counterexample: c.to_string(),
                }),
                _ => Err(format!("a cached contract result has a bad line `{l}`")),
            }
        })
        .collect()
}
