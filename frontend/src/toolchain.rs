//! What the process's own tool runs use, decided once at the edge (the
//! driver's command line, the Cargo wrapper) and read by every stage below
//! it: which rustc and host C++ compiler, how long a rustc run may take,
//! and whether the build cache is used. No stage reads the environment for
//! these, and nothing sets it: a library user that configures nothing gets
//! [`Toolchain::from_env`] at the first use. Also here: how one job runs
//! rustc ([`RustcConfig`]), which every stage that takes a job's settings
//! names without running rustc itself.

use std::sync::OnceLock;
use std::time::Duration;

/// The variable that limits one rustc run, in seconds.
pub const TIMEOUT_VAR: &str = "RMIR_RUSTC_TIMEOUT";
/// Generous: a file of thousands of callbacks built at `-O3` takes minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The rustc and the cache setting of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// The rustc every MIR run, layout probe and host build runs: a
    /// closure's layout belongs to one rustc (the Cargo wrapper's is the
    /// one cargo chose).
    pub rustc: String,
    /// The host C++ compiler that builds `.cu` device libraries for the
    /// host reference and the lint (`$CXX`, else `c++`).
    pub cxx: String,
    /// The time limit of one rustc run (`$RMIR_RUSTC_TIMEOUT` seconds, else
    /// 600), or why the variable's value is not one: reported by the first
    /// rustc run, as the limit is only needed then.
    pub rustc_timeout: Result<Duration, String>,
    /// The folder `NVIDIA_LIB_DIR` names: where NVRTC, nvJitLink and
    /// libNVVM are looked for first (`backend_nvptx::nvidia`).
    pub nvidia_lib_dir: Option<std::path::PathBuf>,
    /// Whether the build cache is read and written (`--no-cache`,
    /// `RMIR_CACHE=off`: no).
    pub cache: bool,
}

impl Toolchain {
    /// `$RUSTC` (else `rustc` from `PATH`), `$CXX` (else `c++`),
    /// `$RMIR_RUSTC_TIMEOUT`, and the cache off when `RMIR_CACHE=off`: what
    /// a process that configured nothing uses.
    pub fn from_env() -> Toolchain {
        Toolchain {
            rustc: std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string()),
            cxx: std::env::var("CXX").unwrap_or_else(|_| "c++".to_string()),
            rustc_timeout: match std::env::var(TIMEOUT_VAR) {
                Err(_) => Ok(DEFAULT_TIMEOUT),
                Ok(v) => match v.trim().parse::<f64>() {
                    Ok(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
                    _ => Err(format!(
                        "{TIMEOUT_VAR}=`{v}`: expected a positive number of seconds"
                    )),
                },
            },
            nvidia_lib_dir: std::env::var_os("NVIDIA_LIB_DIR").map(std::path::PathBuf::from),
            cache: std::env::var_os("RMIR_CACHE").is_none_or(|v| v != "off"),
        }
    }
}

static TOOLCHAIN: OnceLock<Toolchain> = OnceLock::new();

/// Sets the process's toolchain, before any stage reads it. Once it is set
/// (or was read, which fixes the default), a different one is refused with
/// the one in force.
pub fn configure(toolchain: Toolchain) -> Result<(), &'static Toolchain> {
    let set = TOOLCHAIN.get_or_init(|| toolchain.clone());
    if *set == toolchain {
        Ok(())
    } else {
        Err(set)
    }
}

/// The process's toolchain: the configured one, else
/// [`Toolchain::from_env`].
pub fn get() -> &'static Toolchain {
    TOOLCHAIN.get_or_init(Toolchain::from_env)
}

/// How to run rustc. A struct rather than bool parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustcConfig {
    /// `-C opt-level`: 0 to 3.
    pub opt_level: u8,
    pub overflow_checks: bool,
    pub edition: String,
}

impl RustcConfig {
    /// `-C debug-assertions` as rustc sets it for this opt-level when a
    /// profile does not say: on at opt-level 0, as in Cargo's dev profile.
    pub fn debug_assertions(&self) -> bool {
        self.opt_level == 0
    }
}

impl Default for RustcConfig {
    fn default() -> RustcConfig {
        RustcConfig {
            opt_level: 0,
            overflow_checks: true,
            edition: "2021".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_setting_holds() {
        let t = get().clone();
        assert_eq!(configure(t.clone()), Ok(()));
        let other = Toolchain {
            rustc: format!("{}-other", t.rustc),
            cache: !t.cache,
            ..t.clone()
        };
        assert_eq!(configure(other), Err(get()));
        assert_eq!(get(), &t);
    }
}
