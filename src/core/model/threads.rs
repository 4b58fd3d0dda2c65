//! Thread lists an agent can read at a glance: names sorted the way people
//! number things (`worker-2` before `worker-10`), and a cut list that shows
//! one thread of every name family (digits collapsed: `worker-#`) before a
//! second of any, naming the biggest groups it left out. Pure.

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Compares names with runs of digits read as numbers.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let m = digits(&mut x);
                let n = digits(&mut y);
                // Compare by value: fewer significant digits is smaller.
                let (m, n) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
                let by_value = m.len().cmp(&n.len()).then_with(|| m.cmp(n));
                if by_value != Ordering::Equal {
                    return by_value;
                }
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x.next();
                y.next();
            }
        }
    }
}

fn digits(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut s = String::new();
    while let Some(c) = it.peek().copied().filter(char::is_ascii_digit) {
        s.push(c);
        it.next();
    }
    s
}

/// A name's family: every run of digits replaced by `#`.
pub fn family(name: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Which of `names` to show when at most `limit` fit: indexes into
/// `names` in natural order, and the families left out with how many of
/// each, biggest first.
pub fn pick(names: &[&str], limit: usize) -> (Vec<usize>, Vec<(String, usize)>) {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&i, &j| natural_cmp(names[i], names[j]));
    if names.len() <= limit {
        return (order, Vec::new());
    }
    // Families in the order of their first member; members in order.
    let mut families: Vec<(String, Vec<usize>)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for &i in &order {
        let f = family(names[i]);
        match index.get(&f) {
            Some(&k) => families[k].1.push(i),
            None => {
                index.insert(f.clone(), families.len());
                families.push((f, vec![i]));
            }
        }
    }
    // Round robin: every family one thread before any family a second.
    let mut shown = Vec::new();
    let mut round = 0;
    while shown.len() < limit {
        let mut any = false;
        for (_, members) in &families {
            if let Some(&i) = members.get(round) {
                any = true;
                if shown.len() < limit {
                    shown.push(i);
                }
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    shown.sort_by(|&i, &j| natural_cmp(names[i], names[j]));
    let mut left: Vec<(String, usize)> = families
        .into_iter()
        .map(|(f, members)| {
            let n = members.iter().filter(|i| !shown.contains(i)).count();
            (f, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    left.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (shown, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sort_by_value() {
        let mut v = vec![
            "job-worker-10",
            "job-worker-2",
            "job-worker-1",
            "main",
            "job-worker-02b",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "job-worker-1",
                "job-worker-2",
                "job-worker-02b",
                "job-worker-10",
                "main"
            ]
        );
        assert_eq!(family("pool-3-thread-12"), "pool-#-thread-#");
    }

    #[test]
    fn a_cut_list_shows_every_family_before_a_second_of_any() {
        let mut names: Vec<String> = (1..=20).map(|i| format!("job-worker-{i}")).collect();
        names.extend(["main".to_string(), "Finalizer".to_string()]);
        names.extend((1..=3).map(|i| format!("http-{i}")));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (shown, left) = pick(&refs, 6);
        let shown: Vec<&str> = shown.iter().map(|&i| refs[i]).collect();
        assert_eq!(
            shown,
            [
                "Finalizer",
                "http-1",
                "http-2",
                "job-worker-1",
                "job-worker-2",
                "main"
            ]
        );
        assert_eq!(
            left,
            vec![("job-worker-#".to_string(), 18), ("http-#".to_string(), 1)]
        );
        let (all, none) = pick(&refs, 100);
        assert_eq!(all.len(), refs.len());
        assert!(none.is_empty());
    }
}
