//! Where a timed call's time went: the calls its method makes, timed in
//! the JVM by call site (a call in a loop is one site, with its count and
//! its sum). The probe's helper hands the sums over as one string
//! ([`parse`] reads it), and the sites' names come from the class file.

/// One call site of a timed method: the method it calls, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalleeSite {
    /// The called method's class, a Java name (`com.acme.Store`).
    pub class: String,
    pub method: String,
    /// The caller's line at the site, when the class has a line table.
    pub line: Option<u32>,
    /// A method of the timed method's own class (it reads bare).
    pub own: bool,
}

/// One site's share of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalleeTime {
    pub site: CalleeSite,
    /// Calls made from the site (a loop makes several).
    pub calls: u64,
    /// Their time, summed, in ns.
    pub ns: u64,
    /// The last call that threw was made here (its time is counted up to
    /// the throw).
    pub threw: bool,
}

/// A timed call's callees, as a snapshot carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callees {
    /// The whole call, in ns.
    pub total_ns: u64,
    /// Every site, in code order.
    pub sites: Vec<CalleeTime>,
}

impl Callees {
    /// The time no callee accounts for: the method's own code.
    pub fn own_ns(&self) -> u64 {
        let callees: u64 = self.sites.iter().map(|s| s.ns).sum();
        self.total_ns.saturating_sub(callees)
    }
}

/// Reads the helper's text, `cut;sum,count;sum,count…` (one pair per
/// site, in code order; `cut` is the site whose call last threw, from 1,
/// or 0), against the sites the class file names. `None` when the text
/// is not that (another probe's layout, a truncated read).
pub fn parse(text: &str, sites: &[CalleeSite]) -> Option<Vec<CalleeTime>> {
    let mut parts = text.split(';');
    let cut: usize = parts.next()?.parse().ok()?;
    let mut out = Vec::with_capacity(sites.len());
    for (k, site) in sites.iter().enumerate() {
        let (ns, calls) = parts.next()?.split_once(',')?;
        out.push(CalleeTime {
            site: site.clone(),
            calls: calls.parse::<i64>().ok()?.max(0) as u64,
            ns: ns.parse::<i64>().ok()?.max(0) as u64,
            threw: cut == k + 1,
        });
    }
    parts.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(method: &str, line: u32) -> CalleeSite {
        CalleeSite {
            class: "Store".into(),
            method: method.into(),
            line: Some(line),
            own: false,
        }
    }

    #[test]
    fn the_helpers_text_reads_as_one_time_per_site() {
        let sites = [site("find", 41), site("parse", 42)];
        let got = parse("2;121000000,1;1100000,20", &sites).expect("reads");
        assert_eq!(
            (got[0].ns, got[0].calls, got[0].threw),
            (121_000_000, 1, false)
        );
        assert_eq!(
            (got[1].ns, got[1].calls, got[1].threw),
            (1_100_000, 20, true)
        );
        let c = Callees {
            total_ns: 124_000_000,
            sites: got,
        };
        assert_eq!(c.own_ns(), 1_900_000);
    }

    #[test]
    fn a_text_that_does_not_fit_the_sites_is_not_read() {
        let sites = [site("find", 41)];
        for bad in ["", "x;1,1", "0;1", "0;1,1;2,2", "0", "0;a,1"] {
            assert_eq!(parse(bad, &sites), None, "{bad:?}");
        }
        assert_eq!(parse("0", &[]), Some(Vec::new()));
    }
}
