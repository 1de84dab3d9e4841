//! A new Subscription's choice below its channel's head, and why: OLM's resolver offers a
//! Subscription without an installed CSV or a startingCSV every bundle of its channel
//! (`getSubscriptionVariables`, in `sortChannel` order, head first) and installs the first it
//! can, so a head whose requirements nothing provides is passed over without a word. What
//! stops the head is what the same resolution says with the Subscription starting at it.

use super::steps::{PulledBy, Request, Resolution, resolve};
use crate::model::chain::{Head, heads};

/// A Subscription that gets an older bundle than its channel's head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    /// The Subscription.
    pub subscription: String,
    /// The CSV OLM installs for it.
    pub chosen: String,
    /// The channel's head.
    pub head: String,
    /// The channel (the Subscription's, else the package's default).
    pub channel: String,
    /// Why the head cannot be installed: the constraints of the resolution starting at it
    /// that are not the Subscription's own, in OLM's words (`bundle X requires an operator
    /// with package: P ...`), else OLM's message.
    pub why: Vec<String>,
}

/// Every new Subscription of `req.namespace` (no installed CSV, no startingCSV) for which `r`,
/// the resolution of `req`, installs a bundle that is not the head of its channel in its
/// catalog, in Subscription order.
pub fn passed_over(req: &Request<'_>, r: &Resolution) -> Vec<PassedOver> {
    let Ok(plan) = &r.result else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, s) in req.state.subscriptions.iter().enumerate() {
        if s.namespace != req.namespace || !s.installed_csv.is_empty() || !s.starting_csv.is_empty()
        {
            continue;
        }
        let Some(chosen) = plan
            .chosen
            .iter()
            .find(|c| c.pulled_by == Some(PulledBy::Subscription(s.name.clone())))
        else {
            continue;
        };
        let Some(cfg) = req
            .catalogs
            .iter()
            .find(|c| c.key.name == s.catalog && c.key.namespace == s.catalog_namespace)
            .map(|c| c.cfg)
        else {
            continue;
        };
        let channel = if s.channel.is_empty() {
            match cfg.packages.iter().find(|p| p.name == s.package) {
                Some(p) => p.default_channel.clone(),
                None => continue,
            }
        } else {
            s.channel.clone()
        };
        let Some(c) = cfg
            .channels
            .iter()
            .find(|c| c.package == s.package && c.name == channel)
        else {
            continue;
        };
        let Head::One(head) = heads(&c.entries) else {
            continue;
        };
        if chosen.csv == head {
            continue;
        }
        let mut at_head = req.state.clone();
        at_head.subscriptions[i].starting_csv = head.to_string();
        let again = resolve(&Request {
            state: &at_head,
            ..req.clone()
        });
        let Err(f) = &again.result else {
            continue;
        };
        let mut why: Vec<String> = again
            .explanation
            .iter()
            .flat_map(|e| &e.items)
            .filter(|it| !it.constraint.starts_with("subscription "))
            .map(|it| it.constraint.clone())
            .collect();
        if why.is_empty() {
            why.push(f.to_string());
        }
        out.push(PassedOver {
            subscription: s.name.clone(),
            chosen: chosen.csv.clone(),
            head: head.to_string(),
            channel,
            why,
        });
    }
    out
}
