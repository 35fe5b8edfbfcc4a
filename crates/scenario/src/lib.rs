//! The scenario format: parsing with located errors, validation, variants, and the result
//! type shared by every backend.

pub mod backend;
pub mod derived;
pub mod error;
pub mod footprint;
pub mod load;
pub mod metrics;
pub mod model;
pub mod references;
pub mod results;
pub mod spans;
pub mod spec;
pub mod topology;
pub mod units;
mod validate;

pub use backend::{Backend, Progress};
pub use error::{ScenarioError, ScenarioErrors};
pub use load::{LoadOptions, load_file, load_str};
pub use model::Scenario;
pub use results::RunResult;
