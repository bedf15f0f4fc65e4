package experiments

// The stories of issue 12, "The stories, faithful to their sources": each
// test asserts the figures its document reports, within the document's own
// precision, and lists as skipped subtests the figures tsim cannot reproduce
// yet, with the mechanism each needs (docs/stories.md has every row).
