//! The few NCCL entry points a sort's exchange between GPUs uses, loaded
//! at run time (as the driver is): `libnccl.so.2`, the name the
//! `nvidia-nccl-cu13` package and NVIDIA's system packages install, or
//! the file `RMIR_NCCL` names. Nothing here links NCCL at build time.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

pub type Comm = *mut c_void;
type Result_ = c_int;
/// `ncclUint8`: the exchange moves bytes.
pub const UINT8: c_int = 1;

type InitAll = unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Result_;
type Destroy = unsafe extern "C" fn(Comm) -> Result_;
type SendRecv =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, Comm, *mut c_void) -> Result_;
type Group = unsafe extern "C" fn() -> Result_;
type ErrorString = unsafe extern "C" fn(Result_) -> *const c_char;

/// NCCL's functions, resolved once.
pub struct Nccl {
    _lib: libloading::Library,
    pub comm_init_all: InitAll,
    pub comm_destroy: Destroy,
    send: SendRecv,
    recv: SendRecv,
    pub group_start: Group,
    pub group_end: Group,
    error_string: ErrorString,
}

/// The library names tried, in order.
fn candidates() -> Vec<String> {
    match std::env::var("RMIR_NCCL") {
        Ok(path) => vec![path],
        Err(_) => vec!["libnccl.so.2".into(), "libnccl.so".into()],
    }
}

impl Nccl {
    /// NCCL, loaded at the first call; a clear message where it is not
    /// found or lacks a function.
    pub fn get() -> Result<&'static Nccl, String> {
        static NCCL: OnceLock<Result<Nccl, String>> = OnceLock::new();
        NCCL.get_or_init(Nccl::load).as_ref().map_err(Clone::clone)
    }

    fn load() -> Result<Nccl, String> {
        Nccl::load_from(&candidates())
    }

    fn load_from(names: &[String]) -> Result<Nccl, String> {
        // SAFETY: loading NCCL runs its initialisers, which only set up
        // its own state.
        let lib = names
            .iter()
            .find_map(|n| unsafe { libloading::Library::new(n) }.ok())
            .ok_or_else(|| {
                format!(
                    "moving data between GPUs needs NCCL, and none of {names:?} could be loaded: \
                     install the nvidia-nccl-cu13 package and put its lib directory on \
                     LD_LIBRARY_PATH, or name the library in RMIR_NCCL"
                )
            })?;
        fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
            // SAFETY: each name is NCCL's C function of the type it is
            // read as (nccl.h, unchanged since NCCL 2.0).
            unsafe { lib.get::<T>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("NCCL has no {name}: {e}"))
        }
        Ok(Nccl {
            comm_init_all: symbol(&lib, "ncclCommInitAll")?,
            comm_destroy: symbol(&lib, "ncclCommDestroy")?,
            send: symbol(&lib, "ncclSend")?,
            recv: symbol(&lib, "ncclRecv")?,
            group_start: symbol(&lib, "ncclGroupStart")?,
            group_end: symbol(&lib, "ncclGroupEnd")?,
            error_string: symbol(&lib, "ncclGetErrorString")?,
            _lib: lib,
        })
    }

    /// `Ok` for `ncclSuccess`, else NCCL's own words for the code.
    pub fn check(&self, what: &str, code: Result_) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any code.
        let text = unsafe { (self.error_string)(code) };
        let text = if text.is_null() {
            String::from("unknown")
        } else {
            // SAFETY: a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Err(format!("NCCL's {what} failed: {text} ({code})"))
    }

    /// `ncclSend` of `bytes` at `buf` to `peer`.
    ///
    /// # Safety
    ///
    /// `buf` holds `bytes` device bytes of `comm`'s device, live until the
    /// stream has run the send; `stream` is a stream of that device.
    pub unsafe fn send(
        &self,
        buf: u64,
        bytes: usize,
        peer: usize,
        comm: Comm,
        stream: *mut c_void,
    ) -> Result<(), String> {
        // SAFETY: the caller's contract.
        unsafe { self.p2p(self.send, "ncclSend", (buf, bytes), peer, comm, stream) }
    }

    /// `ncclRecv` of `bytes` into `buf` from `peer`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::send`], and nothing else writes `buf` meanwhile.
    pub unsafe fn recv(
        &self,
        buf: u64,
        bytes: usize,
        peer: usize,
        comm: Comm,
        stream: *mut c_void,
    ) -> Result<(), String> {
        // SAFETY: the caller's contract.
        unsafe { self.p2p(self.recv, "ncclRecv", (buf, bytes), peer, comm, stream) }
    }

    /// # Safety
    ///
    /// As [`Nccl::send`] and [`Nccl::recv`].
    unsafe fn p2p(
        &self,
        f: SendRecv,
        name: &str,
        (buf, bytes): (u64, usize),
        peer: usize,
        comm: Comm,
        stream: *mut c_void,
    ) -> Result<(), String> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            f(
                buf as *mut c_void,
                bytes,
                UINT8,
                peer as c_int,
                comm,
                stream,
            )
        };
        self.check(name, code)
    }
}

#[cfg(test)]
mod tests {
    use super::Nccl;

    #[test]
    fn a_missing_library_is_named_with_how_to_get_it() {
        let names = ["/nonexistent/libnccl.so.2".to_string()];
        let message = Nccl::load_from(&names).err().expect("no such file loads");
        assert!(message.contains("/nonexistent/libnccl.so.2"), "{message}");
        assert!(
            message.contains("nvidia-nccl-cu13") && message.contains("RMIR_NCCL"),
            "{message}"
        );
    }

    #[test]
    fn a_library_without_ncclsend_is_refused() {
        // libc loads everywhere and is not NCCL.
        let names = ["libc.so.6".to_string()];
        let message = Nccl::load_from(&names).err().expect("libc is not NCCL");
        assert!(
            message.starts_with("NCCL has no ncclCommInitAll"),
            "{message}"
        );
    }
}
