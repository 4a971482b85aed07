//! What admission knows of a module: the one fact model, `ir::facts`,
//! read off the `rmir` dialect (registrations, closures and their captures,
//! every body's signature, calls, environment writes and ops). Plain data,
//! so each rule is a plain function of it.

pub use ir::facts::{
    BodyFact, BodyKind, CallFact, CallKind, CallbackRef, CaptureFact, CaptureMode, ClosureFact,
    ClosureKind, Loc, ModuleFacts, RegistrationFact,
};
