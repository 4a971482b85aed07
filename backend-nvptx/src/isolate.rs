//! Running one nvJitLink job (create, add every input, complete, read the
//! result) in this process or in a child process.
//!
//! Why a child: nvJitLink dies by signal on some malformed inputs (SIGSEGV on
//! a cubin with bytes appended, SIGFPE on a zero `sh_entsize`, SIGSEGV on
//! LTOIR with one bit flipped, …). [`crate::container`] validates every
//! header and table we can read, but the LTOIR payload (NVVM bitcode) and
//! nvJitLink's own checks are opaque, so validation cannot be complete. A
//! program that links untrusted input runs the job in a child
//! ([`Isolation::Child`]: the `driver` binary re-executes itself with a
//! hidden subcommand that calls [`serve_child`]); a death by signal becomes
//! [`JobError::Crashed`], naming the input being added, or for a crash while
//! linking, the inputs that crash nvJitLink on their own.
//!
//! The protocol, over the child's stdin and stdout, is private to this file
//! and read defensively all the same: a request (options, inputs, output
//! kind), then from the child progress records (`S` + stage) and one final
//! record (`O` with the output and info log, or `E` with the failure).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::nvjitlink::{InputType, Linker, NvJitLinkError};

/// Where nvJitLink runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// In this process: the cheapest, for inputs this process produced.
    #[default]
    InProcess,
    /// In a child process, `program args…`, which must call [`serve_child`]
    /// with its stdin and stdout.
    Child { program: PathBuf, args: Vec<String> },
}

/// What the job returns: the cubin, or PTX for `-ptx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobOutput {
    Cubin,
    Ptx,
}

/// One input of a job.
#[derive(Clone, Copy, Debug)]
pub struct JobInput<'a> {
    pub kind: InputType,
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// A link for nvJitLink: options, inputs in order, output kind.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    pub options: &'a [String],
    pub inputs: Vec<JobInput<'a>>,
    pub output: JobOutput,
}

/// A finished job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobResult {
    pub bytes: Vec<u8>,
    pub info_log: String,
}

/// Which step of a job was running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Create,
    /// Adding input `n` (0-based).
    Add(usize),
    Complete,
    Read,
}

/// Why a job failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobError {
    /// nvJitLink returned an error.
    Failed { stage: Stage, error: NvJitLinkError },
    /// The child died by `signal` during `stage`; `culprits` are the inputs
    /// found to crash nvJitLink (the one being added, or for a crash in
    /// `Complete`, those that crash it when linked alone; may be empty).
    Crashed {
        stage: Stage,
        signal: i32,
        culprits: Vec<String>,
    },
    /// The child could not be run, or ended without an answer.
    Child(String),
}

impl Isolation {
    /// Runs `job` here or in the child.
    pub fn run(&self, job: &Job<'_>) -> Result<JobResult, JobError> {
        match self {
            Isolation::InProcess => run_job(job, &mut |_| {}),
            Isolation::Child { program, args } => {
                let result = run_in_child(program, args, job);
                match result {
                    Err(JobError::Crashed {
                        stage: Stage::Complete,
                        signal,
                        ..
                    }) => Err(JobError::Crashed {
                        stage: Stage::Complete,
                        signal,
                        culprits: crashing_alone(program, args, job),
                    }),
                    other => other,
                }
            }
        }
    }
}

/// For a crash while linking: the inputs that crash nvJitLink linked alone
/// (a failed link of one input is expected: its references are undefined).
fn crashing_alone(program: &PathBuf, args: &[String], job: &Job<'_>) -> Vec<String> {
    if job.inputs.len() == 1 {
        return vec![job.inputs[0].name.to_string()];
    }
    job.inputs
        .iter()
        .filter(|input| {
            let alone = Job {
                options: job.options,
                inputs: vec![**input],
                output: job.output,
            };
            matches!(
                run_in_child(program, args, &alone),
                Err(JobError::Crashed { .. })
            )
        })
        .map(|input| input.name.to_string())
        .collect()
}

/// Runs `job` with nvJitLink in this process; `progress` hears each stage
/// before it starts.
pub fn run_job(job: &Job<'_>, progress: &mut dyn FnMut(Stage)) -> Result<JobResult, JobError> {
    let failed = |stage| move |error| JobError::Failed { stage, error };
    progress(Stage::Create);
    let mut linker = Linker::new(job.options).map_err(failed(Stage::Create))?;
    for (n, input) in job.inputs.iter().enumerate() {
        progress(Stage::Add(n));
        linker
            .add(input.kind, input.bytes, input.name)
            .map_err(failed(Stage::Add(n)))?;
    }
    progress(Stage::Complete);
    linker.complete().map_err(failed(Stage::Complete))?;
    progress(Stage::Read);
    let bytes = match job.output {
        JobOutput::Cubin => linker.cubin(),
        JobOutput::Ptx => linker.ptx(),
    }
    .map_err(failed(Stage::Read))?;
    Ok(JobResult {
        bytes,
        info_log: linker.info_log(),
    })
}

const REQUEST_MAGIC: &[u8; 8] = b"rmirlnk1";

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_stage(out: &mut Vec<u8>, stage: Stage) {
    let (tag, n) = match stage {
        Stage::Create => (0u8, 0u64),
        Stage::Add(n) => (1, n as u64),
        Stage::Complete => (2, 0),
        Stage::Read => (3, 0),
    };
    out.push(tag);
    out.extend_from_slice(&n.to_le_bytes());
}

/// A cursor over bytes that refuses to read past the end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("truncated message at byte {}", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn usize(&mut self) -> Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|_| "a length does not fit in memory".to_string())
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.usize()?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "a string is not UTF-8".to_string())
    }
    fn stage(&mut self) -> Result<Stage, String> {
        let tag = self.u8()?;
        let n = self.usize()?;
        match tag {
            0 => Ok(Stage::Create),
            1 => Ok(Stage::Add(n)),
            2 => Ok(Stage::Complete),
            3 => Ok(Stage::Read),
            other => Err(format!("unknown stage {other}")),
        }
    }
}

fn encode_request(job: &Job<'_>) -> Vec<u8> {
    let mut out = REQUEST_MAGIC.to_vec();
    out.push(match job.output {
        JobOutput::Cubin => 0,
        JobOutput::Ptx => 1,
    });
    out.extend_from_slice(&(job.options.len() as u64).to_le_bytes());
    for option in job.options {
        put_bytes(&mut out, option.as_bytes());
    }
    out.extend_from_slice(&(job.inputs.len() as u64).to_le_bytes());
    for input in &job.inputs {
        out.push(input.kind as u8);
        put_bytes(&mut out, input.name.as_bytes());
        put_bytes(&mut out, input.bytes);
    }
    out
}

/// A decoded request: owned options, names and bytes.
struct Request {
    options: Vec<String>,
    inputs: Vec<(InputType, String, Vec<u8>)>,
    output: JobOutput,
}

fn input_type(tag: u8) -> Result<InputType, String> {
    Ok(match tag {
        1 => InputType::Cubin,
        2 => InputType::Ptx,
        3 => InputType::Ltoir,
        4 => InputType::Fatbin,
        5 => InputType::Object,
        6 => InputType::Library,
        other => return Err(format!("unknown input type {other}")),
    })
}

fn decode_request(bytes: &[u8]) -> Result<Request, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(REQUEST_MAGIC.len())? != REQUEST_MAGIC {
        return Err("not a link request".to_string());
    }
    let output = match r.u8()? {
        0 => JobOutput::Cubin,
        1 => JobOutput::Ptx,
        other => return Err(format!("unknown output kind {other}")),
    };
    let count = r.usize()?;
    let mut options = Vec::new();
    for _ in 0..count {
        options.push(r.string()?);
    }
    let count = r.usize()?;
    let mut inputs = Vec::new();
    for _ in 0..count {
        let kind = input_type(r.u8()?)?;
        let name = r.string()?;
        inputs.push((kind, name, r.bytes()?.to_vec()));
    }
    if r.at != bytes.len() {
        return Err("trailing bytes after the request".to_string());
    }
    Ok(Request {
        options,
        inputs,
        output,
    })
}

/// The nvJitLink calls an error can name, so a decoded error keeps the
/// `&'static str` that [`NvJitLinkError::Call`] holds.
const CALLS: [&str; 9] = [
    "nvJitLinkVersion",
    "nvJitLinkCreate",
    "nvJitLinkAddData",
    "nvJitLinkComplete",
    "nvJitLinkGetLinkedCubinSize",
    "nvJitLinkGetLinkedCubin",
    "nvJitLinkGetLinkedPtxSize",
    "nvJitLinkGetLinkedPtx",
    "nvJitLink",
];

fn encode_error(out: &mut Vec<u8>, stage: Stage, error: &NvJitLinkError) {
    out.push(b'E');
    put_stage(out, stage);
    match error {
        NvJitLinkError::Call {
            call,
            code,
            subject,
            error_log,
        } => {
            out.push(0);
            for field in [*call, code, subject, error_log] {
                put_bytes(out, field.as_bytes());
            }
        }
        NvJitLinkError::InteriorNul { what } => {
            out.push(1);
            put_bytes(out, what.as_bytes());
        }
        NvJitLinkError::Library(e) => {
            out.push(2);
            put_bytes(out, e.to_string().as_bytes());
        }
    }
}

fn decode_error(r: &mut Reader<'_>) -> Result<JobError, String> {
    let stage = r.stage()?;
    let error = match r.u8()? {
        0 => {
            let call = r.string()?;
            NvJitLinkError::Call {
                call: CALLS
                    .iter()
                    .find(|c| **c == call)
                    .copied()
                    .unwrap_or("nvJitLink"),
                code: r.string()?,
                subject: r.string()?,
                error_log: r.string()?,
            }
        }
        1 => NvJitLinkError::InteriorNul { what: r.string()? },
        2 => return Err(format!("in the child: {}", r.string()?)),
        other => return Err(format!("unknown error kind {other}")),
    };
    Ok(JobError::Failed { stage, error })
}

/// The child's side: reads one request from `input`, runs it, writes
/// progress and the answer to `output`. Returns the process exit code: 0
/// when an answer (success or nvJitLink's refusal) was written, 2 when the
/// request was unreadable.
pub fn serve_child(input: &mut dyn Read, output: &mut dyn Write) -> i32 {
    let mut raw = Vec::new();
    let request = input
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())
        .and_then(|_| decode_request(&raw));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: bad link request: {e}");
            return 2;
        }
    };
    let job = Job {
        options: &request.options,
        inputs: request
            .inputs
            .iter()
            .map(|(kind, name, bytes)| JobInput {
                kind: *kind,
                name,
                bytes,
            })
            .collect(),
        output: request.output,
    };
    // Each stage is written (and flushed) before it starts, so the parent
    // knows where a crash happened.
    let mut write_failed = false;
    let mut progress = |stage| {
        let mut record = vec![b'S'];
        put_stage(&mut record, stage);
        write_failed |= output
            .write_all(&record)
            .and_then(|_| output.flush())
            .is_err();
    };
    let result = run_job(&job, &mut progress);
    let mut record = Vec::new();
    match &result {
        Ok(done) => {
            record.push(b'O');
            put_bytes(&mut record, &done.bytes);
            put_bytes(&mut record, done.info_log.as_bytes());
        }
        Err(JobError::Failed { stage, error }) => encode_error(&mut record, *stage, error),
        // `run_job` fails only with `Failed`; keep the answer well-formed.
        Err(other) => encode_error(
            &mut record,
            Stage::Create,
            &NvJitLinkError::InteriorNul {
                what: format!("{other:?}"),
            },
        ),
    }
    if write_failed
        || output
            .write_all(&record)
            .and_then(|_| output.flush())
            .is_err()
    {
        return 2;
    }
    0
}

fn run_in_child(program: &PathBuf, args: &[String], job: &Job<'_>) -> Result<JobResult, JobError> {
    let child_error = |what: String| JobError::Child(format!("{}: {what}", program.display()));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| child_error(format!("cannot start the link process: {e}")))?;
    // nvJitLink prints some errors to stderr instead of its error log (see
    // `printed_errors`); read it on a thread so neither pipe can fill up.
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            text
        })
    });
    let request = encode_request(job);
    // The child reads the whole request before it writes anything, so
    // writing first and reading after cannot deadlock.
    let written = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(&request))
        .unwrap_or(Ok(()));
    let mut answer = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|mut stdout| stdout.read_to_end(&mut answer))
        .unwrap_or(Ok(0));
    let status = child
        .wait()
        .map_err(|e| child_error(format!("waiting for the link process: {e}")))?;
    let stderr = stderr
        .and_then(|t| t.join().ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let (printed_errors, other) = printed_errors(&stderr);
    if !other.trim().is_empty() {
        eprintln!("{}", other.trim_end());
    }

    // Where it got to: the last progress record.
    let mut r = Reader {
        bytes: &answer,
        at: 0,
    };
    let mut stage = Stage::Create;
    let mut last = None;
    while r.at < answer.len() {
        match r.u8() {
            Ok(b'S') => match r.stage() {
                Ok(s) => stage = s,
                Err(e) => {
                    last = Some(Err(e));
                    break;
                }
            },
            Ok(b'O') => {
                last = Some(r.bytes().and_then(|bytes| {
                    Ok(Ok(JobResult {
                        bytes: bytes.to_vec(),
                        info_log: r.string()?,
                    }))
                }));
                break;
            }
            Ok(b'E') => {
                last = Some(decode_error(&mut r).map(Err));
                break;
            }
            Ok(other) => {
                last = Some(Err(format!("unknown record {other}")));
                break;
            }
            Err(e) => {
                last = Some(Err(e));
                break;
            }
        }
    }

    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        let culprits = match stage {
            Stage::Add(n) => job
                .inputs
                .get(n)
                .map(|i| vec![i.name.to_string()])
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        return Err(JobError::Crashed {
            stage,
            signal,
            culprits,
        });
    }
    if let Err(e) = written {
        return Err(child_error(format!("writing the request: {e}")));
    }
    if let Err(e) = read {
        return Err(child_error(format!("reading the answer: {e}")));
    }
    match last {
        Some(Ok(Ok(_))) if status.success() && !printed_errors.is_empty() => {
            Err(JobError::Failed {
                stage: Stage::Complete,
                error: NvJitLinkError::Call {
                    call: "nvJitLinkComplete",
                    code: "NVJITLINK_SUCCESS with errors printed to stderr".to_string(),
                    subject: format!("options: {}", job.options.join(" ")),
                    error_log: printed_errors.join("\n"),
                },
            })
        }
        Some(Ok(result)) if status.success() => result,
        Some(Err(e)) => Err(child_error(format!("bad answer: {e}"))),
        _ => Err(child_error(format!(
            "the link process ended ({status}) without an answer"
        ))),
    }
}

/// Splits what nvJitLink printed into its errors and the rest. nvJitLink
/// 13.0 prints some diagnostics itself, each behind a `@E@` (error), `@W@`
/// or `@I@` marker and not always ended by a newline, and keeps them out of
/// its error log: `Multiple definition of 'f'` is printed this way while
/// `nvJitLinkComplete` returns success and a cubin. An error printed is an
/// error all the same.
fn printed_errors(stderr: &str) -> (Vec<String>, String) {
    let mut errors = Vec::new();
    let mut other = String::new();
    let mut rest = stderr;
    while !rest.is_empty() {
        // Search after the first character, which may be a marker's `@`.
        let skip = rest.chars().next().map_or(0, char::len_utf8);
        let next = ["@E@", "@W@", "@I@"]
            .iter()
            .filter_map(|m| rest[skip..].find(m).map(|i| i + skip))
            .min()
            .unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(next);
        rest = tail;
        match piece.strip_prefix("@E@") {
            Some(error) => errors.push(error.trim().to_string()),
            None => {
                let text = piece
                    .strip_prefix("@W@")
                    .or_else(|| piece.strip_prefix("@I@"))
                    .unwrap_or(piece);
                other.push_str(text.trim_end());
                other.push('\n');
            }
        }
    }
    (errors, other)
}

/// A signal's name, for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_truncations_are_refused() {
        let options = vec!["-arch=sm_90".to_string(), "-lto".to_string()];
        let job = Job {
            options: &options,
            inputs: vec![
                JobInput {
                    kind: InputType::Ltoir,
                    name: "a.ltoir",
                    bytes: b"\x01\x02",
                },
                JobInput {
                    kind: InputType::Ptx,
                    name: "b.ptx",
                    bytes: b"",
                },
            ],
            output: JobOutput::Ptx,
        };
        let bytes = encode_request(&job);
        let back = decode_request(&bytes).unwrap();
        assert_eq!(back.options, options);
        assert_eq!(back.output, JobOutput::Ptx);
        assert_eq!(
            back.inputs,
            vec![
                (InputType::Ltoir, "a.ltoir".to_string(), vec![1, 2]),
                (InputType::Ptx, "b.ptx".to_string(), vec![]),
            ]
        );
        for cut in 0..bytes.len() {
            assert!(decode_request(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_request(&long).is_err());
    }

    /// A child that dies by signal is a `Crashed` answer naming the signal,
    /// never a crash of this process. (`sh` stands in for nvJitLink here:
    /// a real crash needs an input that validation lets through.)
    #[cfg(unix)]
    #[test]
    fn a_child_killed_by_a_signal_is_reported() {
        let options = vec!["-arch=sm_90".to_string()];
        let job = Job {
            options: &options,
            inputs: vec![JobInput {
                kind: InputType::Cubin,
                name: "x.cubin",
                bytes: b"\x7fELF",
            }],
            output: JobOutput::Cubin,
        };
        for (script, signal) in [("kill -SEGV $$", 11), ("kill -FPE $$", 8)] {
            let isolation = Isolation::Child {
                program: PathBuf::from("sh"),
                args: vec!["-c".to_string(), format!("cat >/dev/null; {script}")],
            };
            match isolation.run(&job) {
                Err(JobError::Crashed {
                    signal: got,
                    stage: Stage::Create,
                    ..
                }) => assert_eq!(got, signal),
                other => panic!("{script}: expected a crash, got {other:?}"),
            }
        }
        // A child that answers nothing is an error, not a success.
        let silent = Isolation::Child {
            program: PathBuf::from("sh"),
            args: vec!["-c".to_string(), "cat >/dev/null".to_string()],
        };
        assert!(matches!(silent.run(&job), Err(JobError::Child(_))));
    }

    #[test]
    fn printed_errors_are_split_from_the_rest() {
        let (errors, other) = printed_errors(
            "@E@error   : Multiple definition of 'f' in 'b.ptx'@W@warning : w\n@E@error   : two\nplain\n",
        );
        assert_eq!(
            errors,
            [
                "error   : Multiple definition of 'f' in 'b.ptx'",
                "error   : two\nplain"
            ]
        );
        assert_eq!(other, "warning : w\n");
        assert_eq!(printed_errors(""), (vec![], String::new()));
    }

    #[test]
    fn errors_round_trip() {
        let error = NvJitLinkError::Call {
            call: "nvJitLinkComplete",
            code: "NVJITLINK_ERROR_PTX_COMPILE".to_string(),
            subject: "options: -arch=sm_90".to_string(),
            error_log: "error   : Undefined reference to 'f' in 'k.ptx'".to_string(),
        };
        let mut out = Vec::new();
        encode_error(&mut out, Stage::Add(3), &error);
        assert_eq!(out[0], b'E');
        let mut r = Reader {
            bytes: &out[1..],
            at: 0,
        };
        assert_eq!(
            decode_error(&mut r).unwrap(),
            JobError::Failed {
                stage: Stage::Add(3),
                error
            }
        );
    }
}
