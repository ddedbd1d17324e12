#!/usr/bin/env python3
"""Fits the relevance calibration of `trove search` (Documentation/PARAMETERS.md, "Relevance").

For each built-in model, every query of notes-dev is scored against every note (cosine), and
the pairs a person would see are kept: the query's 20 best-scored notes by that leg, plus its
right note wherever it ranks. A logistic curve p = 1 / (1 + exp(-(a*x + b))) is fitted to
"is this the right note" with both classes weighted equally (Platt scaling, 1999): p = 0.5 is a
cosine as typical of the right note as of the strongest wrong ones, whatever the number of
notes. The text leg is fitted the same way on the query's word coverage (the share of its
distinct content words found in the note, matched as the CLI's snippets match them), over the
notes holding at least one of its words.

Usage: python3 scripts/calibrate-relevance.py TROVE_BINARY [EVAL_DIR]
Prints a and b per leg; numpy is the only dependency besides the standard library.
"""
import json
import subprocess
import sys
import unicodedata
import re

import numpy as np

trove = sys.argv[1]
folder = sys.argv[2] if len(sys.argv) > 2 else "../shared/eval/notes-dev"
notes = [json.loads(line) for line in open(f"{folder}/notes.jsonl")]
queries = [json.loads(line) for line in open(f"{folder}/queries.jsonl")]
ids = [n["id"] for n in notes]
labels = np.array([[1.0 if q["answer"] == i else 0.0 for i in ids] for q in queries])


def embed(texts, model, query):
    cache = f"/tmp/trove-calibrate-{model}-{'q' if query else 'p'}-{len(texts)}.npy"
    try:
        return np.load(cache)
    except OSError:
        pass
    vectors = _embed(texts, model, query)
    np.save(cache, vectors)
    return vectors


def _embed(texts, model, query):
    args = [trove, "embed", "--json", "--model", model] + (["--query"] if query else [])
    out = subprocess.run(args + texts, check=True, capture_output=True, text=True).stdout
    return np.array([json.loads(line) for line in out.splitlines()])


def fit(x, y):
    """Balanced logistic regression on one feature, by Newton's method."""
    weights = np.where(y > 0, 0.5 / y.sum(), 0.5 / (1 - y).sum())
    a, b = 1.0, 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a * x + b)))
        g = np.array([np.sum(weights * (p - y) * x), np.sum(weights * (p - y))])
        h = np.sum(weights * p * (1 - p))
        hessian = np.array([[np.sum(weights * p * (1 - p) * x * x), np.sum(weights * p * (1 - p) * x)],
                            [np.sum(weights * p * (1 - p) * x), h]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(hessian, g)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-10:
            break
    return a, b


STOP = set("""a an and are as at be by do for from how i in is it my of on or our the to was we what
when where which who with why you your me does did this that there can will about after all any
been but have has had if into not no so than then them they up out its were would should could
some much many""".split())


def words(text):
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return re.findall(r"[^\W_]+", folded)


UNSPACED = [(0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x3400, 0x4DBF),
            (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F)]


def unspaced(term):
    return any(lo <= ord(c) <= hi for c in term for lo, hi in UNSPACED)


def coverage(query, text):
    """As the CLI's Relevance.coverage: words, or character pairs in unspaced scripts."""
    terms = list(dict.fromkeys(words(query)))
    content = [t for t in terms if t not in STOP] or terms
    have = set(words(text))
    folded = " ".join(words(text))
    def found(term):
        if unspaced(term):
            if len(term) < 2:
                return 1.0 if term in folded else 0.0
            pairs = [term[i:i + 2] for i in range(len(term) - 1)]
            return sum(p in folded for p in pairs) / len(pairs)
        return float(term in have or (len(term) >= 4 and any(w.startswith(term) and len(w) <= len(term) + 3 for w in have)))
    return sum(found(t) for t in content) / max(1, len(content))


for model in ["all-MiniLM-L6-v2", "multilingual-e5-small"]:
    n = embed([n["text"] for n in notes], model, False)
    q = embed([q["query"] for q in queries], model, True)
    cos = q @ n.T
    keep = np.zeros_like(cos, dtype=bool)
    for row in range(len(queries)):
        keep[row, np.argsort(-cos[row])[:20]] = True
    keep |= labels > 0
    a, b = fit(cos[keep], labels[keep])
    print(f"{model}: a = {a:.3f}, b = {b:.3f} (p = 0.5 at cosine {-b / a:.3f}); "
          f"right notes' median cosine {np.median(cos[labels > 0]):.3f}, "
          f"strongest wrong ones' {np.median(cos[keep & (labels == 0)]):.3f}")

cov = np.array([[coverage(q["query"], n["text"]) for n in notes] for q in queries])
keep = cov > 0
a, b = fit(cov[keep], labels[keep])
print(f"text coverage: a = {a:.3f}, b = {b:.3f} (p = 0.5 at coverage {-b / a:.3f}); "
      f"right notes' median {np.median(cov[labels > 0]):.3f}")
