//! The operator contract lint (W0201): every admitted callback of a
//! provider with a contract (`reduce` and `segmented_reduce`: associative
//! and commutative, they combine in a tree; the scans: associative;
//! `sort_by`: a strict weak order; `dedup_by`'s `same`: symmetric and
//! transitive; `reduce_by_key`'s and `scan_by_key`'s `same`, the same, and
//! `op`, associative, each through its own thunk; a `par_iter` chain's `reduce`
//! operation, associative and commutative, and `min_by`'s and `max_by`'s
//! comparators, strict weak orders, through the chain's combine thunk)
//! runs on the host over edge and
//! pseudo-random values of its element type ([`crate::laws`]). What runs is
//! the callback as the GPU gets it: its lowered code, compiled for this CPU
//! by LLVM's JIT in process (`backend_nvptx::codegen::host`), so the lint
//! needs no host build of the user's crate and works wherever a callback
//! is built (`driver build`, `driver cargo build`). Its captures take
//! several sets of values (ones, zeros, then pseudo-random ones); a
//! counterexample names the set that shows it (`with the captures k = 1`).
//! A violation is a warning; `--deny-warnings` makes it an error.
//!
//! Each callback's verdict is cached by its code (the lowered module's part
//! that exports it, without source locations or the registration's number),
//! its provider, element type and environment layout: an edit checks only
//! the callbacks it changed.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use backend_nvptx::codegen::host::{self, HostFn, SLOT};
use manifest::env::EnvLayout;
use manifest::{Element, Provider, Scalar};
use passes::admission::{self, Outcome};
use passes::codes::Code;
use passes::diagnostic::Diagnostic;
use passes::lower::Thunk;
use rayon::prelude::*;

use crate::laws::{self, Finding, Slot};
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

/// The contract of a registration's operation, by its provider and its
/// function (a `par_iter` chain's terminal: `ParIter::reduce`'s operation
/// and `ParIter::min_by`'s and `max_by`'s comparators have one, the
/// terminals whose operation is the compiler's do not); `None` for one
/// without (the maps and select).
pub fn contract_of(provider: Provider, function: &str) -> Option<Contract> {
    match (provider, function) {
        (Provider::ChainReduce, "ParIter::reduce") => Some(Contract {
            how: "combines the chain's values in a tree whose shape the GPU chooses",
            consequence: "the GPU's result can differ from the sequential host fold, and change \
                          with the input size",
            help: "use an associative and commutative operation (a wrapping sum, `min`, \
                   `max`, `&`, `|`, `^`, or a selection by a total order)",
            what: "operation",
        }),
        (Provider::ChainPick, "ParIter::min_by" | "ParIter::max_by") => Some(Contract {
            how: "compares the chain's values in an order the GPU chooses",
            consequence: "the value the GPU picks then depends on that order, and need not be \
                          the host's",
            help: "compare with `cmp` on a key (`a.cmp(b)`, `key(a).cmp(&key(b))`, \
                   `a.total_cmp(b)` for floats)",
            what: "comparator",
        }),
        (Provider::ChainReduce | Provider::ChainPick | Provider::ChainCollect, _) => None,
        (p, _) => laws(p),
    }
}

/// How the lint calls a callback's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calling {
    /// The thunk: `R THUNK(env, a, b)`.
    Direct,
    /// A `par_iter` chain's `SYMBOL_combine(env, a, b, &mut out)`
    /// (`vocab::Shape::Chain`): `reduce`'s operation, its value in `out`.
    ChainFold,
    /// The same, answering whether the later value wins: `min_by`'s
    /// (`cmp(a, b) == Greater`) or `max_by`'s (`!= Greater`).
    ChainMinBy,
    ChainMaxBy,
    /// A by-key's `SYMBOL_same(env, a, b)`: an equivalence on its keys.
    KeySame,
    /// A by-key's `SYMBOL_op(env, a, b)`: associative on its values.
    ValueFold,
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
            help: "compare with `cmp` on a key (`a.cmp(b)`, `key(a).cmp(&key(b))`, \
                   `a.total_cmp(b)` for floats): `Less` only where `a` goes first, never \
                   for equal keys",
            what: "comparator",
        }),
        Provider::SegmentedSortBy => Some(Contract {
            how: "orders each segment's elements by a merge sort",
            consequence: "the order the GPU's merge sort gives each segment then depends on the \
                          algorithm and the segment sizes, and need not be the host's",
            help: "compare with `cmp` on a key (`a.cmp(b)`, `key(a).cmp(&key(b))`, \
                   `a.total_cmp(b)` for floats): `Less` only where `a` goes first, never \
                   for equal keys",
            what: "comparator",
        }),
        Provider::MergeBy => Some(Contract {
            how: "merges two sorted inputs along merge paths",
            consequence: "the GPU's merge splits the inputs where the comparator says, and the \
                          order it gives then depends on the algorithm and the input sizes, and \
                          need not be the host's",
            help: "compare with `cmp` on a key (`a.cmp(b)`, `key(a).cmp(&key(b))`, \
                   `a.total_cmp(b)` for floats), the order both inputs are sorted in: `Less` \
                   only where `a` goes first, never for equal keys",
            what: "comparator",
        }),
        Provider::DedupBy => Some(Contract {
            how: "compares each element with the one before it",
            consequence: "`Vec::dedup_by` compares each element with the last one it kept: the \
                          elements the GPU keeps then need not be the host's",
            help: "compare with `==`, on the elements or on a key of them (`|a, b| a == b`, \
                   `|a, b| a.0 == b.0`, `|a, b| a / 10 == b / 10`)",
            what: "relation",
        }),
        Provider::PartitionPoint => Some(Contract {
            how: "finds each query's place by a binary search of the sorted input",
            consequence: "a binary search skips most elements: the index it gives then depends \
                          on which it probes, and need not be the first element the predicate \
                          fails on",
            help: "test the element against the query by the order the input is sorted in \
                   (`|x, q| x < q`, `|x, q| x.key <= q.key`): true for every element before \
                   the query's place, false from there",
            what: "predicate",
        }),
        Provider::Transform
        | Provider::Transform2
        | Provider::Select
        | Provider::Partition
        | Provider::Histogram => None,
        // A by-key's `op` (its `same`: [`by_key_same`]).
        Provider::ReduceByKey | Provider::ScanByKey => Some(Contract {
            how: "folds each run's values in a tree of tiles, in index order",
            consequence: "the GPU's folds can differ from the sequential host fold of each run, \
                          and change with where the runs lie",
            help: "use an associative operation (a wrapping sum, `min`, `max`, `&`, `|`, `^`; \
                   commutativity is not needed)",
            what: "`op`",
        }),
        // A chain's contract depends on its terminal: `contract_of`.
        Provider::ChainReduce | Provider::ChainPick | Provider::ChainCollect => None,
    }
}

/// The contract of a by-key's `same` (`reduce_by_key`, `scan_by_key`):
/// an equivalence, as `==` is.
pub fn by_key_same() -> Contract {
    Contract {
        how: "compares each key with the one before it",
        consequence: "the GPU decides where a run ends at each pair of neighbours, in tiles: \
                      a relation that is not an equivalence splits the keys into runs that \
                      need not be the host's",
        help: "compare with `==`, on the keys or on a key of them (`|a, b| a == b`, \
               `|a, b| a.0 == b.0`, `|a, b| a / 10 == b / 10`)",
        what: "`same`",
    }
}

/// What the lint found, as diagnostics, and the callbacks it could not
/// check, each with why.
pub struct Linted {
    pub warnings: Vec<Diagnostic>,
    pub unchecked: Vec<String>,
}

/// One admitted callback to check.
#[derive(Debug, Clone)]
pub struct LintJob {
    pub registration: usize,
    pub provider: Provider,
    /// The element type of the operands.
    pub element: Element,
    /// partition_point's query type, its predicate's second operand.
    pub query: Option<Element>,
    /// The thunk's symbol in `code`, and how it is called.
    pub symbol: String,
    pub calling: Calling,
    pub env: EnvLayout,
    /// The part of the lowered module that exports the thunk, without
    /// source locations (LLVM dialect, as `ir::parse` reads it).
    pub code: String,
}

/// The lint's jobs: the admitted thunks of registrations with a contract
/// (`function` gives a registration's function, [`contract_of`]), each
/// with its code taken from the lowered `module`.
pub fn jobs(
    module: &melior::ir::Module<'_>,
    thunks: &[Thunk],
    function: &dyn Fn(usize) -> Option<String>,
) -> Result<Vec<LintJob>, String> {
    let parts = passes::lower::split::Parts::of(module);
    thunks
        .iter()
        .flat_map(|t| {
            let f = function(t.registration).unwrap_or_default();
            if contract_of(t.provider, &f).is_none() {
                return Vec::new();
            }
            // A by-key's two callbacks, each on its own operands: `same`
            // on keys, `op` on values.
            if t.provider.shape() == manifest::Shape::ByKey {
                return vec![
                    (
                        t,
                        Calling::KeySame,
                        format!("{}_same", t.symbol),
                        t.signature.element().clone(),
                    ),
                    (
                        t,
                        Calling::ValueFold,
                        format!("{}_op", t.symbol),
                        t.signature.ret.clone(),
                    ),
                ];
            }
            // A chain's combine works on its values (`R`), not its elements.
            let calling = match f.as_str() {
                "ParIter::reduce" => Calling::ChainFold,
                "ParIter::min_by" => Calling::ChainMinBy,
                "ParIter::max_by" => Calling::ChainMaxBy,
                _ => Calling::Direct,
            };
            let (symbol, element) = match calling {
                Calling::Direct => (t.symbol.clone(), t.signature.element()),
                _ => (format!("{}_combine", t.symbol), &t.signature.ret),
            };
            vec![(t, calling, symbol, element.clone())]
        })
        .map(|(t, calling, symbol, element)| {
            Ok(LintJob {
                registration: t.registration,
                provider: t.provider,
                element,
                query: (t.provider == Provider::PartitionPoint)
                    .then(|| t.signature.params.get(1).cloned())
                    .flatten(),
                code: parts
                    .extract(&[symbol.as_str()], false)
                    .map_err(|e| e.to_string())?,
                symbol,
                calling,
                env: t.env.clone(),
            })
        })
        .collect()
}

/// How long one callback's checks may run on the host before the lint
/// gives up on it (a loop bounded by an operand, such as `(0..a).sum()`,
/// meets `i64::MAX`).
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Changes whenever the checks or their values change: part of every key.
const CHECKS: &str = "laws/2";

/// The device libraries' host build, made when a callback first needs it.
/// Shared with each callback's thread, which may outlive the lint (see
/// [`check_limited`]): the library stays loaded while its code can run.
struct DeviceLibraries {
    inputs: Vec<backend_nvptx::LinkInput>,
    built: std::sync::OnceLock<Result<HostLibrary, String>>,
}

/// A shared library loaded into this process, with the folder it lies in.
struct HostLibrary {
    library: libloading::Library,
    _dir: frontend::scratch::Scratch,
}

impl DeviceLibraries {
    /// The address of `symbol` in the libraries' host build; `Err` when they
    /// have none (a library that is not CUDA source, a compile error).
    fn resolve(&self, symbol: &str) -> Result<Option<usize>, String> {
        if self.inputs.is_empty() {
            return Ok(None);
        }
        let built = self.built.get_or_init(|| {
            let dir = frontend::scratch::Scratch::new("lint")?;
            let path = crate::hostref::host_device_shared_library(&self.inputs, &dir)?;
            // SAFETY: a library just compiled from the user's device code,
            // whose initialisers are those of plain C++ functions.
            let library = unsafe { libloading::Library::new(&path) }
                .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
            Ok(HostLibrary { library, _dir: dir })
        });
        let built = built.as_ref().map_err(Clone::clone)?;
        // SAFETY: the address is only given to the JIT as the definition of
        // the C function of that name the callback declares.
        let symbol = unsafe { built.library.get::<*const ()>(symbol.as_bytes()) };
        Ok(symbol.ok().map(|s| *s as usize))
    }
}

/// One job's verdict: its registration, which callback it checked, what
/// it found (or why it could not check), and its timings.
type JobResult = (usize, Calling, Result<Vec<Finding>, String>, Timings);

/// Runs the lint over `jobs`, in parallel, each verdict from the cache when
/// it holds it; callbacks that call device libraries' functions run their
/// host build (`device_inputs`, compiled by the host's C++ compiler).
pub fn lint(
    jobs: &[LintJob],
    source: &frontend::pmir::SourceFacts,
    outcomes: &[Outcome],
    device_inputs: &[backend_nvptx::LinkInput],
    cache: Option<&cache::Cache>,
    timings: &mut Timings,
) -> Linted {
    let libraries = Arc::new(DeviceLibraries {
        inputs: device_inputs.to_vec(),
        built: std::sync::OnceLock::new(),
    });
    let library_bytes: Vec<u8> = device_inputs
        .iter()
        .flat_map(|d| crate::buildcache::pack(&[d.name.as_bytes(), &d.bytes]))
        .collect();
    let results: Vec<JobResult> = jobs
        .par_iter()
        .map(|job| {
            let mut t = Timings::default();
            let bytes = crate::buildcache::fetch(
                cache,
                &mut t,
                "operator contract (cache hit)",
                "contract",
                || {
                    let code = canonical_symbols(&job.code);
                    crate::buildcache::key(
                        "contract",
                        &[
                            ("checks", CHECKS.as_bytes()),
                            ("provider", job.provider.name().as_bytes()),
                            ("calling", format!("{:?}", job.calling).as_bytes()),
                            ("element", format!("{:?}", job.element).as_bytes()),
                            ("query", format!("{:?}", job.query).as_bytes()),
                            ("env", format!("{:?}", job.env).as_bytes()),
                            ("code", code.as_bytes()),
                            ("libraries", &library_bytes),
                        ],
                    )
                },
                |t| {
                    Ok(t.time("operator contract (host JIT)", || {
                        encode(&check_limited(job, &libraries))
                    }))
                },
            );
            let result = bytes.and_then(|b| decode(&b));
            (job.registration, job.calling, result, t)
        })
        .collect();
    let mut warnings = Vec::new();
    let mut unchecked = Vec::new();
    for (registration, calling, result, t) in results {
        timings.merge(&t);
        let Some(o) = outcomes
            .iter()
            .find(|o| o.registration.index == registration)
        else {
            continue;
        };
        match result {
            Ok(findings) => warnings.extend(findings.iter().map(|f| warning(o, f, calling))),
            Err(why) => {
                let at = o.registration.loc.span.map_or(String::new(), |s| {
                    format!(
                        " at {}:{}:{}",
                        source.file_name(s.file),
                        s.lo_line,
                        s.lo_col
                    )
                });
                let part = match calling {
                    Calling::KeySame => "'s `same`",
                    Calling::ValueFold => "'s `op`",
                    _ => "",
                };
                unchecked.push(format!(
                    "the `{}`{part}{at}: {why}",
                    o.registration.function
                ))
            }
        }
    }
    Linted {
        warnings,
        unchecked,
    }
}

/// The registration's number removed from the symbols (`rmir_cb3_f` →
/// `rmir_cb_f`, `rmir_fn12_g` → `rmir_fn_g`): a callback keeps its verdict
/// when another is added before it.
fn canonical_symbols(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    use passes::lower::plan::{BODY_PREFIX, THUNK_PREFIX};
    while let Some(at) = [THUNK_PREFIX, BODY_PREFIX]
        .iter()
        .filter_map(|p| rest.find(p).map(|i| i + p.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = rest[at..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// [`check`] on a thread of its own, given up after [`TIME_LIMIT`] (the
/// thread is left to finish or to end with the process, holding what it
/// runs: the job and the device libraries).
fn check_limited(job: &LintJob, libraries: &Arc<DeviceLibraries>) -> Result<Vec<Finding>, String> {
    let (send, receive) = mpsc::channel();
    let owned = job.clone();
    let libraries = Arc::clone(libraries);
    std::thread::Builder::new()
        .name("rmir-lint".into())
        .spawn(move || {
            let _ = send.send(check(&owned, &|name| libraries.resolve(name)));
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    match receive.recv_timeout(TIME_LIMIT) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "its checks ran longer than {} s on the host",
            TIME_LIMIT.as_secs()
        )),
    }
}

/// The callback's lowered code compiled for the host and checked with
/// each set of capture values until one breaks a law.
fn check(
    job: &LintJob,
    resolve: &dyn Fn(&str) -> Result<Option<usize>, String>,
) -> Result<Vec<Finding>, String> {
    // The laws over the element's values, with one environment.
    type Laws<'a> = Box<dyn Fn(HostFn, &[u8]) -> Vec<Finding> + 'a>;
    let (provider, calling) = (job.provider, job.calling);
    let scalar_values = |s: Scalar| match laws::values(s) {
        Some(_) => Ok(s),
        None => Err(format!(
            "the host has no values of `{}` to check with",
            s.name()
        )),
    };
    let laws: Laws<'_> = match (&job.element, &job.query) {
        // partition_point's predicate of an element and a query.
        (t, Some(q)) => {
            let (t, q) = (Operands::of(t)?, Operands::of(q)?);
            for s in t.scalar().into_iter().chain(q.scalar()) {
                scalar_values(s)?;
            }
            Box::new(move |f, env| t.probe(&q, f, env))
        }
        (t, None) => match t {
            Element::Scalar(s) => {
                let s = scalar_values(*s)?;
                Box::new(move |f, env| run_laws(f, env, s, provider, calling))
            }
            Element::Composite(l) => {
                let d = composite_domain(l)?;
                Box::new(move |f, env| run_composite_laws(f, env, &d, provider, calling))
            }
        },
    };
    let context = ir::context().map_err(|e| e.to_string())?;
    let module = ir::parse(&context, &job.code).map_err(|e| e.to_string())?;
    host::with_host_code(&module, &job.symbol, resolve, |f| {
        for (env, captured) in capture_sets(&job.env) {
            let found = laws(f, &env);
            if !found.is_empty() {
                return found
                    .into_iter()
                    .map(|mut finding| {
                        if !captured.is_empty() {
                            finding
                                .counterexample
                                .push_str(&format!(", with the captures {captured}"));
                        }
                        finding
                    })
                    .collect();
            }
        }
        Vec::new()
    })
    .map_err(|e| e.to_string())
}

/// The checks' view of a tuple or struct element: each scalar field at its
/// offset.
fn composite_domain(l: &manifest::Layout) -> Result<laws::Composite, String> {
    let fields = l
        .fields
        .iter()
        .map(|f| match f.element.scalar() {
            Some(s) if laws::values(s).is_some() => Ok((f.name.clone(), f.offset as usize, s)),
            _ => Err(format!(
                "the host has no values of `{}`'s field `.{}` to check with",
                l.name, f.name
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(laws::Composite {
        size: l.size as usize,
        fields,
    })
}

/// A composite fold's or comparator's laws: the thunk takes its operands
/// through pointers and a fold writes its result through a third one
/// (`passes::lower::thunks`' in-memory ABI), each in a buffer aligned for
/// any scalar; a comparator answers "less" in the result slot.
fn run_composite_laws(
    f: HostFn,
    env: &[u8],
    d: &laws::Composite,
    provider: Provider,
    calling: Calling,
) -> Vec<Finding> {
    let words = d.size.div_ceil(8).max(1);
    let aligned = |v: &[u8]| {
        let mut buffer = vec![0u64; words];
        for (i, b) in v.iter().enumerate() {
            buffer[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        buffer
    };
    let less = |a: &Vec<u8>, b: &Vec<u8>| {
        let (a, b) = (aligned(a), aligned(b));
        let mut answer = [0u8; SLOT];
        f.call(
            env,
            &[address_slot(a.as_ptr()), address_slot(b.as_ptr())],
            &mut answer,
        )?;
        Some(answer[0] != 0)
    };
    // The thunk on two values by address, with a slot for the value it
    // writes through the last: its answer, and that value's bytes.
    let with_out = |a: &Vec<u8>, b: &Vec<u8>| {
        let (a, b) = (aligned(a), aligned(b));
        let mut out = aligned(&vec![laws::PADDING; d.size]);
        let mut answer = [0u8; SLOT];
        let at = address_slot(out.as_mut_ptr());
        f.call(
            env,
            &[address_slot(a.as_ptr()), address_slot(b.as_ptr()), at],
            &mut answer,
        )?;
        let bytes: Vec<u8> = out
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(d.size)
            .collect();
        Some((answer[0] != 0, bytes))
    };
    let fold = |a: &Vec<u8>, b: &Vec<u8>| with_out(a, b).map(|r| r.1);
    // A chain's pick: whether the later value wins.
    let later_wins = |a: &Vec<u8>, b: &Vec<u8>| with_out(a, b).map(|r| r.0);
    match (calling, provider) {
        // A chain's fold writes its value through the last address, as a
        // reduce's composite result; its answer is "kept".
        (Calling::ChainFold, _) => laws::check_fold(&fold, d, true),
        (Calling::ChainMinBy, _) => laws::check_relation(&later_wins, d, "Greater"),
        (Calling::ChainMaxBy, _) => {
            laws::check_relation(&|a, b| later_wins(a, b).map(|w| !w), d, "Greater")
        }
        (Calling::KeySame, _) => laws::check_same(&less, d),
        (Calling::ValueFold, _) => laws::check_fold(&fold, d, false),
        (Calling::Direct, Provider::SortBy | Provider::SegmentedSortBy | Provider::MergeBy) => {
            laws::check_order(&less, d)
        }
        (Calling::Direct, Provider::DedupBy) => laws::check_same(&less, d),
        (Calling::Direct, p) => laws::check_fold(
            &fold,
            d,
            matches!(p, Provider::Reduce | Provider::SegmentedReduce),
        ),
    }
}

fn run_laws(
    f: HostFn,
    env: &[u8],
    s: Scalar,
    provider: Provider,
    calling: Calling,
) -> Vec<Finding> {
    let call = |a: &Slot, b: &Slot| {
        let mut out = [0u8; SLOT];
        f.call(env, &[*a, *b], &mut out).map(|()| out)
    };
    // A chain's combine: its answer, and the value it wrote through its
    // last parameter (a pointer, passed in its slot).
    let combine = |a: &Slot, b: &Slot| {
        let mut value = [0u8; SLOT];
        let at = address_slot(value.as_mut_ptr());
        let mut answer = [0u8; SLOT];
        f.call(env, &[*a, *b, at], &mut answer)?;
        Some((answer[0] != 0, value))
    };
    match calling {
        Calling::Direct => {}
        Calling::KeySame => return laws::check_same(&|a, b| call(a, b).map(|r| r[0] != 0), &s),
        Calling::ValueFold => return laws::check_fold(&call, &s, false),
        Calling::ChainFold => {
            return laws::check_fold(&|a, b| combine(a, b).map(|r| r.1), &s, true)
        }
        // "The later wins" is `compare(earlier, later) == Greater` for a
        // minimum, `!= Greater` for a maximum: the lint checks `Greater`,
        // which is a strict weak order exactly when `Less` is.
        Calling::ChainMinBy => {
            return laws::check_relation(&|a, b| combine(a, b).map(|r| r.0), &s, "Greater")
        }
        Calling::ChainMaxBy => {
            return laws::check_relation(&|a, b| combine(a, b).map(|r| !r.0), &s, "Greater")
        }
    }
    match provider {
        Provider::SortBy | Provider::SegmentedSortBy | Provider::MergeBy => {
            laws::check_order(&|a, b| call(a, b).map(|r| r[0] != 0), &s)
        }
        Provider::DedupBy => laws::check_same(&|a, b| call(a, b).map(|r| r[0] != 0), &s),
        p => laws::check_fold(
            &call,
            &s,
            matches!(p, Provider::Reduce | Provider::SegmentedReduce),
        ),
    }
}

/// The values of one operand of a predicate of two types, and how the
/// thunk takes them: a scalar in its slot, a tuple or struct by address.
enum Operands {
    Scalar(Scalar),
    Composite(laws::Composite),
}

impl Operands {
    fn of(e: &Element) -> Result<Operands, String> {
        Ok(match e {
            Element::Scalar(s) => Operands::Scalar(*s),
            Element::Composite(l) => Operands::Composite(composite_domain(l)?),
        })
    }

    fn scalar(&self) -> Option<Scalar> {
        match self {
            Operands::Scalar(s) => Some(*s),
            Operands::Composite(_) => None,
        }
    }

    /// partition_point's law over these elements and `queries`.
    fn probe(&self, queries: &Operands, f: HostFn, env: &[u8]) -> Vec<Finding> {
        match (self, queries) {
            (Operands::Scalar(t), Operands::Scalar(q)) => probe(f, env, t, q),
            (Operands::Scalar(t), Operands::Composite(q)) => probe(f, env, t, q),
            (Operands::Composite(t), Operands::Scalar(q)) => probe(f, env, t, q),
            (Operands::Composite(t), Operands::Composite(q)) => probe(f, env, t, q),
        }
    }
}

/// A value as the thunk takes it: a scalar's slot, or a composite's bytes
/// in a buffer aligned for any scalar, passed by address.
trait Passed: laws::Domain {
    fn pass(&self, v: &Self::Value) -> Vec<u64>;
    /// The parameter slot of what [`Passed::pass`] gave.
    fn slot(&self, passed: &[u64]) -> laws::Slot;
}

impl Passed for Scalar {
    fn pass(&self, v: &laws::Slot) -> Vec<u64> {
        v.chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect()
    }

    fn slot(&self, passed: &[u64]) -> laws::Slot {
        let mut slot = [0u8; SLOT];
        for (i, w) in passed.iter().enumerate() {
            slot[8 * i..][..8].copy_from_slice(&w.to_le_bytes());
        }
        slot
    }
}

impl Passed for laws::Composite {
    fn pass(&self, v: &Vec<u8>) -> Vec<u64> {
        let mut buffer = vec![0u64; self.size.div_ceil(8).max(1)];
        for (i, b) in v.iter().enumerate() {
            buffer[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        buffer
    }

    fn slot(&self, passed: &[u64]) -> laws::Slot {
        address_slot(passed.as_ptr())
    }
}

/// [`laws::check_monotone`] of the thunk `f`, `pred(element, query)`.
fn probe<T: Passed, Q: Passed>(f: HostFn, env: &[u8], t: &T, q: &Q) -> Vec<Finding> {
    let pred = |a: &T::Value, b: &Q::Value| {
        let (a, b) = (t.pass(a), q.pass(b));
        let mut answer = [0u8; SLOT];
        f.call(env, &[t.slot(&a), q.slot(&b)], &mut answer)?;
        Some(answer[0] != 0)
    };
    laws::check_monotone(&pred, t, q)
}

/// A parameter slot holding the address `at`, for a thunk parameter
/// that is a pointer.
fn address_slot<T>(at: *const T) -> Slot {
    let mut slot = [0u8; SLOT];
    slot[..8].copy_from_slice(&(at as u64).to_le_bytes());
    slot
}

/// The environments the checks run with, each with its captures as a
/// counterexample names them (`k = 1, m = 0`): every capture 1, every
/// capture 0, then four sets drawn from each type's check values.
fn capture_sets(env: &EnvLayout) -> Vec<(Vec<u8>, String)> {
    if env.fields.is_empty() {
        return vec![(vec![0u8; env.size as usize], String::new())];
    }
    let mut sequence = laws::Sequence::from_seed(0x2545_F491_4F6C_DD1D);
    let values: Vec<Vec<Slot>> = env
        .fields
        .iter()
        .map(|f| laws::values(f.scalar).unwrap_or_default())
        .collect();
    let mut sets = Vec::new();
    for set in 0..6 {
        let mut bytes = vec![0u8; env.size as usize];
        let mut names = Vec::new();
        for (field, vals) in env.fields.iter().zip(&values) {
            let value: Slot = match set {
                0 => vals.get(1).copied().unwrap_or([0; SLOT]),
                1 => vals.first().copied().unwrap_or([0; SLOT]),
                _ => match vals.len() {
                    0 => [0; SLOT],
                    n => vals[(sequence.draw() % n as u64) as usize],
                },
            };
            let at = field.offset as usize;
            let size = field.size as usize;
            if let Some(dst) = bytes.get_mut(at..at + size) {
                dst.copy_from_slice(&value[..size.min(SLOT)]);
            }
            names.push(format!(
                "{} = {}",
                field.name,
                laws::show(&value, field.scalar)
            ));
        }
        sets.push((bytes, names.join(", ")));
    }
    sets
}

fn warning(o: &Outcome, f: &Finding, calling: Calling) -> Diagnostic {
    let reg = &o.registration;
    let contract = match calling {
        Calling::KeySame => Some(by_key_same()),
        _ => contract_of(reg.provider, &reg.function),
    }
    .unwrap_or(Contract {
        how: "combines elements",
        consequence: "",
        help: "",
        what: "operation",
    });
    // Whether the values compared hold floats: the admitted signature's.
    let float = match &o.verdict {
        passes::admission::Verdict::Admitted(abi) => abi
            .signature
            .params
            .iter()
            .chain([&abi.signature.ret])
            .any(|e| match e {
                Element::Scalar(s) => s.is_float(),
                e => e.scalars().iter().any(|(_, s)| s.is_float()),
            }),
        _ => f.counterexample.contains('.') || f.counterexample.contains("NaN"),
    };
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
    if float && matches!(contract.what, "operation" | "`op`") {
        d = d.with_note(
            "floats are compared within 16 ulps of the largest magnitude among the operands and \
             results: this difference is larger than rounding explains",
        );
    }
    d.with_note(contract.consequence).with_help(contract.help)
}

/// A verdict as the cache stores it: a line per finding (`law\tcounterexample`),
/// or one `unchecked\twhy` line.
fn encode(result: &Result<Vec<Finding>, String>) -> Vec<u8> {
    match result {
        Ok(findings) => findings
            .iter()
            .map(|f| format!("{}\t{}\n", f.law, f.counterexample))
            .collect::<String>()
            .into_bytes(),
        Err(why) => format!("unchecked\t{}\n", why.replace('\n', " ")).into_bytes(),
    }
}

fn decode(bytes: &[u8]) -> Result<Vec<Finding>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "a cached contract verdict is not text")?;
    let mut findings = Vec::new();
    for l in text.lines() {
        match l.split_once('\t') {
            Some(("unchecked", why)) => return Err(why.to_string()),
            Some((law, c)) => findings.push(Finding {
                law: law.to_string(),
                counterexample: c.to_string(),
            }),
            None => return Err(format!("a cached contract verdict has a bad line `{l}`")),
        }
    }
    Ok(findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_lose_their_registration_number() {
        assert_eq!(
            canonical_symbols("llvm.func @rmir_cb12_f(%a) { llvm.call @rmir_fn3_g() } rmir_cb"),
            "llvm.func @rmir_cb_f(%a) { llvm.call @rmir_fn_g() } rmir_cb"
        );
    }

    #[test]
    fn verdicts_round_trip_through_the_cache_text() {
        let found = Ok(vec![Finding {
            law: "associative".into(),
            counterexample: "op(op(a, b), c) = 1 but …".into(),
        }]);
        assert_eq!(decode(&encode(&found)), found);
        let unchecked = Err("it calls `mix`, which has no host definition".to_string());
        assert_eq!(decode(&encode(&unchecked)), unchecked);
        assert_eq!(decode(b""), Ok(Vec::new()));
    }
}
