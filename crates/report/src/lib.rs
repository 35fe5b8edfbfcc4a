//! Results on disk and what is made of them: `summary.json` and per-run series, aggregation
//! over seeds, comparison with published figures, Markdown and HTML reports and plots. Reads results
//! only; knows nothing of the backends that produced them.

pub mod compare;
pub mod compare_html;
pub mod html;
pub mod markdown;
pub mod names;
pub mod outages;
mod panels;
pub mod provenance;
pub mod published;
pub use markdown::write_report;
pub mod plots;
pub mod statement;
pub mod store;
pub mod summary;
pub mod tables;
pub mod verdict;

pub use store::{read_summary, write_results};
pub use summary::{Check, MetricStats, Summary, VariantSummary, summarize};
