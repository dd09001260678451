package io.betree.systest;

import io.betree.Cursor;
import io.betree.Environment;
import io.betree.Index;
import io.betree.Transaction;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A deterministic workload for several writer threads committing at once, for crash tests. Writer
 * {@code w} (0, 1, ...) numbers its commits {@code n} = 1, 2, 3, ... and commit {@code n} is one
 * transaction that writes three or four indexes:
 * <ul>
 * <li>{@code owned}: one to three distinct rows of the writer's own key range (key: writer, slot;
 * value: {@link Row}, which records the commit that wrote it), created, rewritten or deleted
 * depending on the row it reads. Nobody else writes the range, so a {@link Model} recomputes it
 * exactly after any number of the writer's commits, and every commit changes it;
 * <li>{@code progress}: the writer's row, set to {@code n};
 * <li>{@code journal}: the row (writer, {@code n}), an {@link Entry} recording the progress of every
 * writer in the commit's snapshot and the shared counter the commit incremented, if any;
 * <li>{@code shared}: about every other commit increments one of a few counters every writer
 * increments (read-modify-write). Two writers incrementing one counter at once conflict: the later
 * one fails with a {@code WriteConflictException} and runs the commit again in a new transaction.
 * </ul>
 * Which rows and which counter commit {@code n} of writer {@code w} touches depends only on the seed,
 * {@code w} and {@code n}, so a restarted process carries on where the data ends.
 *
 * <p>Each index on its own tells which commits are there, and {@link #verify} checks that they all
 * tell the same: a commit visible in one index and not in another (a commit applied in part, or
 * recovered in part) fails it, and so do a writer's commits with a gap, a counter whose value is not
 * the number of commits that incremented it, and a commit that survived while one it saw in its
 * snapshot (hence committed before it) did not.
 */
final class ConcurrentWritersWorkload {
    static final String OWNED = "owned";
    static final String PROGRESS = "progress";
    static final String JOURNAL = "journal";
    static final String SHARED = "shared";

    final long seed;
    final int writers;
    final int slots;
    final int counters;
    final int maxPayload;

    ConcurrentWritersWorkload(long seed, int writers, int slots, int counters, int maxPayload) {
        this.seed = seed;
        this.writers = writers;
        this.slots = slots;
        this.counters = counters;
        this.maxPayload = maxPayload;
    }

    /** The workload's four indexes in one environment. */
    record Indexes(Index owned, Index progress, Index journal, Index shared) {
    }

    static Indexes open(Environment env) {
        return new Indexes(env.openIndex(OWNED, AccountsWorkload.shape()),
                env.openIndex(PROGRESS, AccountsWorkload.shape()), env.openIndex(JOURNAL, AccountsWorkload.shape()),
                env.openIndex(SHARED, AccountsWorkload.shape()));
    }

    // ------------------------------------------------------------------ encodings

    static byte[] ownedKey(int writer, int slot) {
        return ByteBuffer.allocate(8).putInt(writer).putInt(slot).array();
    }

    static byte[] writerKey(int writer) {
        return ByteBuffer.allocate(4).putInt(writer).array();
    }

    static byte[] journalKey(int writer, long n) {
        return ByteBuffer.allocate(12).putInt(writer).putLong(n).array();
    }

    static byte[] counterKey(int counter) {
        return ByteBuffer.allocate(4).putInt(counter).array();
    }

    static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    private static long decodeLong(byte[] b, String what) {
        if (b.length != 8) {
            throw new AssertionError(what + " of " + b.length + " bytes");
        }
        return ByteBuffer.wrap(b).getLong();
    }

    /** An {@code owned} row: the commit that wrote it last (writer, n), version, payload. */
    record Row(int writer, long n, int version, byte[] payload) {
        byte[] encode() {
            return ByteBuffer.allocate(16 + payload.length).putInt(writer).putLong(n).putInt(version).put(payload)
                    .array();
        }

        static Row decode(byte[] b) {
            if (b.length < 16) {
                throw new AssertionError("owned row of " + b.length + " bytes");
            }
            ByteBuffer buf = ByteBuffer.wrap(b);
            Row r = new Row(buf.getInt(), buf.getLong(), buf.getInt(), new byte[b.length - 16]);
            buf.get(r.payload);
            return r;
        }

        boolean sameAs(Row o) {
            return o != null && writer == o.writer && n == o.n && version == o.version
                    && Arrays.equals(payload, o.payload);
        }

        @Override
        public String toString() {
            return "[writer " + writer + ", commit " + n + ", version " + version + ", " + payload.length + " bytes]";
        }
    }

    /**
     * A {@code journal} row: each writer's progress in the commit's snapshot, and the counter the
     * commit incremented with the value it wrote ({@code counter} -1: none).
     */
    record Entry(long[] seen, int counter, long count) {
        byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(12 + 8 * seen.length).putInt(counter).putLong(count);
            for (long s : seen) {
                b.putLong(s);
            }
            return b.array();
        }

        static Entry decode(byte[] b, int writers) {
            if (b.length != 12 + 8 * writers) {
                throw new AssertionError("journal entry of " + b.length + " bytes");
            }
            ByteBuffer buf = ByteBuffer.wrap(b);
            int counter = buf.getInt();
            long count = buf.getLong();
            long[] seen = new long[writers];
            for (int i = 0; i < writers; i++) {
                seen[i] = buf.getLong();
            }
            return new Entry(seen, counter, count);
        }
    }

    /** A {@code shared} counter: its value and the commit that wrote it last. */
    record Counter(long count, int writer, long n) {
        byte[] encode() {
            return ByteBuffer.allocate(20).putLong(count).putInt(writer).putLong(n).array();
        }

        static Counter decode(byte[] b) {
            if (b.length != 20) {
                throw new AssertionError("counter of " + b.length + " bytes");
            }
            ByteBuffer buf = ByteBuffer.wrap(b);
            return new Counter(buf.getLong(), buf.getInt(), buf.getLong());
        }
    }

    // ------------------------------------------------------------------ the commits

    /** One owned row a commit touches; the random draws are made up front, whatever the state. */
    private record Step(int slot, int roll, int payloadLength) {
    }

    /** What commit {@code n} of a writer does: its steps, on distinct slots, and its counter (-1: none). */
    private record Plan(List<Step> steps, int counter) {
    }

    private Plan plan(int writer, long n) {
        Random r = new Random(seed ^ (n * 0x9E3779B97F4A7C15L) ^ ((writer + 1) * 0xC2B2AE3D27D4EB4FL));
        int count = 1 + r.nextInt(3);
        List<Step> steps = new ArrayList<>(count);
        boolean[] taken = new boolean[slots];
        while (steps.size() < count) {
            int slot = r.nextInt(slots);
            if (!taken[slot]) {
                taken[slot] = true;
                steps.add(new Step(slot, r.nextInt(100), r.nextInt(maxPayload + 1)));
            }
        }
        return new Plan(steps, r.nextBoolean() ? r.nextInt(counters) : -1);
    }

    /** The row after the step (null: deleted), given the row before (null: absent). */
    private static Row decide(Row old, Step s, int writer, long n) {
        byte[] payload = AccountsWorkload.payload(n * 64 + writer, s.slot(), s.payloadLength());
        if (old == null) {
            return new Row(writer, n, 1, payload);
        }
        return s.roll() < 25 ? null : new Row(writer, n, old.version() + 1, payload);
    }

    /**
     * Performs commit {@code n} of {@code writer} in {@code txn} (without committing it).
     *
     * @throws io.betree.WriteConflictException if another writer incremented the same counter since
     *         the snapshot of {@code txn}
     * @throws IllegalStateException if the writer's progress in the snapshot is not {@code n - 1}
     */
    void apply(Transaction txn, Indexes ix, int writer, long n) {
        Plan p = plan(writer, n);
        long[] seen = new long[writers];
        for (int u = 0; u < writers; u++) {
            byte[] v = ix.progress().get(txn, writerKey(u));
            seen[u] = v == null ? 0 : decodeLong(v, "progress");
        }
        if (seen[writer] != n - 1) {
            throw new IllegalStateException("writer " + writer + " runs commit " + n + " but its progress is "
                    + seen[writer]);
        }
        long count = 0;
        if (p.counter() >= 0) {
            byte[] v = ix.shared().get(txn, counterKey(p.counter()));
            count = (v == null ? 0 : Counter.decode(v).count()) + 1;
            ix.shared().put(txn, counterKey(p.counter()), new Counter(count, writer, n).encode());
        }
        for (Step s : p.steps()) {
            byte[] key = ownedKey(writer, s.slot());
            byte[] current = ix.owned().get(txn, key);
            Row next = decide(current == null ? null : Row.decode(current), s, writer, n);
            if (next == null) {
                ix.owned().delete(txn, key);
            } else {
                ix.owned().put(txn, key, next.encode());
            }
        }
        ix.journal().put(txn, journalKey(writer, n), new Entry(seen, p.counter(), count).encode());
        ix.progress().put(txn, writerKey(writer), longBytes(n));
    }

    /** Each writer's last commit as the environment holds it (0: none). */
    long[] progress(Indexes ix) {
        long[] progress = new long[writers];
        for (int w = 0; w < writers; w++) {
            byte[] v = ix.progress().get(writerKey(w));
            progress[w] = v == null ? 0 : decodeLong(v, "progress");
        }
        return progress;
    }

    // ------------------------------------------------------------------ the model

    /** The expected {@code owned} range of one writer after its first {@link #commits} commits. */
    final class Model {
        final int writer;
        final TreeMap<Integer, Row> rows = new TreeMap<>();
        long commits;

        Model(int writer) {
            this.writer = writer;
        }

        Model advancedTo(long k) {
            if (k < commits) {
                throw new IllegalArgumentException("cannot go back from " + commits + " to " + k);
            }
            Model m = new Model(writer);
            m.rows.putAll(rows);
            m.commits = commits;
            while (m.commits < k) {
                long n = m.commits + 1;
                for (Step s : plan(writer, n).steps()) {
                    Row next = decide(m.rows.get(s.slot()), s, writer, n);
                    if (next == null) {
                        m.rows.remove(s.slot());
                    } else {
                        m.rows.put(s.slot(), next);
                    }
                }
                m.commits = n;
            }
            return m;
        }

        /** Null if {@code stored} holds exactly these rows, else the first differences. */
        String differences(Map<Integer, Row> stored) {
            StringBuilder sb = new StringBuilder();
            int shown = 0;
            for (int slot = 0; slot < slots; slot++) {
                Row want = rows.get(slot);
                Row got = stored.get(slot);
                if (want == null ? got != null : !want.sameAs(got)) {
                    if (shown++ < 6) {
                        sb.append("slot ").append(slot).append(": expected ").append(want == null ? "(absent)" : want)
                                .append(", found ").append(got == null ? "(absent)" : got).append("; ");
                    }
                }
            }
            return shown == 0 ? null : sb.append(shown).append(" slots differ").toString();
        }
    }

    Model[] emptyModels() {
        Model[] models = new Model[writers];
        for (int w = 0; w < writers; w++) {
            models[w] = new Model(w);
        }
        return models;
    }

    // ------------------------------------------------------------------ reading back

    /**
     * Reads every index in one snapshot and checks that the environment holds the state after the
     * first {@code c[w]} commits of each writer {@code w}, whole, for some {@code c[w]} in
     * {@code [lo[w], hi[w]]}: {@code progress} says {@code c[w]}; {@code journal} holds exactly
     * commits 1 to {@code c[w]} of the writer; its {@code owned} range is the model's after
     * {@code c[w]} commits (read by a scan and by gets); every counter equals the number of commits in
     * the journal that incremented it, and these wrote the values 1 to that number, once each, the
     * last writer being the one the counter names; and no commit survived without every commit its
     * snapshot saw. Returns the models at {@code c}; {@code base} holds models at or below {@code lo}.
     *
     * @throws AssertionError naming the first inconsistency, prefixed by {@code context}
     */
    Model[] verify(Environment env, Indexes ix, Model[] base, long[] lo, long[] hi, String context) {
        try (Transaction txn = env.begin()) {
            long[] c = readProgress(txn, ix, context);
            for (int w = 0; w < writers; w++) {
                if (c[w] < lo[w] || c[w] > hi[w] || c[w] < base[w].commits) {
                    throw new AssertionError(context + ": writer " + w + "'s data ends at commit " + c[w]
                            + ", expected one in [" + Math.max(lo[w], base[w].commits) + ", " + hi[w] + "]"
                            + (c[w] < lo[w] ? " (acknowledged commits were lost)" : "") + "; progress of all: "
                            + Arrays.toString(c));
                }
            }
            List<List<Entry>> journal = readJournal(txn, ix, c, context);
            checkCounters(txn, ix, journal, context);
            for (int w = 0; w < writers; w++) {
                for (int i = 0; i < journal.get(w).size(); i++) {
                    long[] seen = journal.get(w).get(i).seen();
                    for (int u = 0; u < writers; u++) {
                        if (seen[u] > c[u]) {
                            throw new AssertionError(context + ": commit " + (i + 1) + " of writer " + w
                                    + " survived, but commit " + seen[u] + " of writer " + u
                                    + ", which it saw (so committed before it), did not: writer " + u
                                    + "'s data ends at commit " + c[u] + " (not a prefix of the commit order)");
                        }
                    }
                }
            }
            Model[] models = new Model[writers];
            List<TreeMap<Integer, Row>> owned = readOwned(txn, ix, context);
            for (int w = 0; w < writers; w++) {
                models[w] = base[w].advancedTo(c[w]);
                String diff = models[w].differences(owned.get(w));
                if (diff != null) {
                    throw new AssertionError(context + ": writer " + w + "'s progress and journal say commit " + c[w]
                            + " but its owned rows are not the state after that many commits (a commit applied in "
                            + "part); they match the state after commit " + matchingCommit(base[w], owned.get(w), hi[w])
                            + ". Differences: " + diff);
                }
            }
            return models;
        }
    }

    private long[] readProgress(Transaction txn, Indexes ix, String context) {
        long[] c = new long[writers];
        try (Cursor cur = ix.progress().scan(txn, null, null)) {
            while (cur.next()) {
                int w = cur.key().length == 4 ? ByteBuffer.wrap(cur.key()).getInt() : -1;
                if (w < 0 || w >= writers) {
                    throw new AssertionError(context + ": unexpected progress key " + Arrays.toString(cur.key()));
                }
                c[w] = decodeLong(cur.value(), "progress");
            }
        }
        for (int w = 0; w < writers; w++) {
            byte[] v = ix.progress().get(txn, writerKey(w));
            if ((v == null ? 0 : decodeLong(v, "progress")) != c[w]) {
                throw new AssertionError(context + ": progress of writer " + w + ": scan and get disagree");
            }
        }
        return c;
    }

    /** The journal entries of each writer, checked to be exactly its commits 1 to {@code c[w]}. */
    private List<List<Entry>> readJournal(Transaction txn, Indexes ix, long[] c, String context) {
        List<List<Entry>> journal = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            journal.add(new ArrayList<>());
        }
        try (Cursor cur = ix.journal().scan(txn, null, null)) {
            while (cur.next()) {
                ByteBuffer key = ByteBuffer.wrap(cur.key());
                int w = cur.key().length == 12 ? key.getInt() : -1;
                if (w < 0 || w >= writers) {
                    throw new AssertionError(context + ": unexpected journal key " + Arrays.toString(cur.key()));
                }
                long n = key.getLong();
                List<Entry> entries = journal.get(w);
                if (n != entries.size() + 1 || n > c[w]) {
                    throw new AssertionError(context + ": the journal holds commit " + n + " of writer " + w
                            + " after its commit " + entries.size() + ", but the writer's progress is " + c[w]
                            + (n > c[w] ? " (a commit applied in part)" : " (a gap in the writer's commits)"));
                }
                Entry e = Entry.decode(cur.value(), writers);
                if (e.seen()[w] != n - 1 || e.counter() != plan(w, n).counter()) {
                    throw new AssertionError(context + ": journal entry of commit " + n + " of writer " + w
                            + " saw the writer at " + e.seen()[w] + " and names counter " + e.counter()
                            + "; the workload says " + (n - 1) + " and " + plan(w, n).counter());
                }
                entries.add(e);
            }
        }
        for (int w = 0; w < writers; w++) {
            if (journal.get(w).size() != c[w]) {
                throw new AssertionError(context + ": writer " + w + "'s progress is " + c[w] + " but the journal ends at "
                        + journal.get(w).size() + " (a commit applied in part, or a lost commit)");
            }
        }
        return journal;
    }

    /** A commit, for messages: commit {@code n} of writer {@code writer}. */
    private record CommitId(int writer, long n) {
        @Override
        public String toString() {
            return "commit " + n + " of writer " + writer;
        }
    }

    /**
     * Checks every counter against the journal entries of the commits that incremented it: they wrote
     * the values 1 to the counter's value, once each, and the one that wrote the last value is the one
     * the counter names.
     */
    private void checkCounters(Transaction txn, Indexes ix, List<List<Entry>> journal, String context) {
        Counter[] stored = new Counter[counters];
        try (Cursor cur = ix.shared().scan(txn, null, null)) {
            while (cur.next()) {
                int k = cur.key().length == 4 ? ByteBuffer.wrap(cur.key()).getInt() : -1;
                if (k < 0 || k >= counters) {
                    throw new AssertionError(context + ": unexpected shared key " + Arrays.toString(cur.key()));
                }
                stored[k] = Counter.decode(cur.value());
            }
        }
        for (int k = 0; k < counters; k++) {
            TreeMap<Long, CommitId> byValue = new TreeMap<>();
            for (int w = 0; w < writers; w++) {
                for (int i = 0; i < journal.get(w).size(); i++) {
                    Entry e = journal.get(w).get(i);
                    CommitId commit = new CommitId(w, i + 1);
                    CommitId other = e.counter() == k ? byValue.put(e.count(), commit) : null;
                    if (other != null) {
                        throw new AssertionError(context + ": " + other + " and " + commit + " both set counter " + k
                                + " to " + e.count() + " (a lost update)");
                    }
                }
            }
            long count = stored[k] == null ? 0 : stored[k].count();
            if (byValue.size() != count || (count > 0 && (byValue.firstKey() != 1 || byValue.lastKey() != count))) {
                throw new AssertionError(context + ": counter " + k + " is " + count + " but " + byValue.size()
                        + " surviving commits incremented it, writing values from " + (byValue.isEmpty() ? "-"
                                : byValue.firstKey() + " to " + byValue.lastKey())
                        + " (a commit applied in part, or one lost before a later one)");
            }
            if (count > 0 && !byValue.get(count).equals(new CommitId(stored[k].writer(), stored[k].n()))) {
                throw new AssertionError(context + ": counter " + k + " names " + new CommitId(stored[k].writer(),
                        stored[k].n()) + " as its last writer, the journal " + byValue.get(count));
            }
        }
    }

    /** Each writer's owned rows, read by a scan and checked against gets. */
    private List<TreeMap<Integer, Row>> readOwned(Transaction txn, Indexes ix, String context) {
        List<TreeMap<Integer, Row>> owned = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            owned.add(new TreeMap<>());
        }
        try (Cursor cur = ix.owned().scan(txn, null, null)) {
            while (cur.next()) {
                ByteBuffer key = ByteBuffer.wrap(cur.key());
                int w = cur.key().length == 8 ? key.getInt() : -1;
                int slot = w >= 0 ? key.getInt() : -1;
                if (w < 0 || w >= writers || slot < 0 || slot >= slots) {
                    throw new AssertionError(context + ": unexpected owned key " + Arrays.toString(cur.key()));
                }
                Row row = Row.decode(cur.value());
                if (row.writer() != w) {
                    throw new AssertionError(context + ": writer " + w + "'s slot " + slot + " holds " + row);
                }
                owned.get(w).put(slot, row);
            }
        }
        for (int w = 0; w < writers; w++) {
            for (int slot = 0; slot < slots; slot++) {
                byte[] v = ix.owned().get(txn, ownedKey(w, slot));
                Row scanned = owned.get(w).get(slot);
                if (v == null ? scanned != null : !Row.decode(v).sameAs(scanned)) {
                    throw new AssertionError(context + ": writer " + w + "'s slot " + slot + ": scan found " + scanned
                            + " but get " + (v == null ? "(absent)" : Row.decode(v)));
                }
            }
        }
        return owned;
    }

    /** The commit count, from {@code base} to {@code hi + 2}, whose model matches {@code rows}, for messages. */
    private static String matchingCommit(Model base, Map<Integer, Row> rows, long hi) {
        for (Model probe = base; probe.commits <= hi + 2; probe = probe.advancedTo(probe.commits + 1)) {
            if (probe.differences(rows) == null) {
                return Long.toString(probe.commits);
            }
        }
        return "none in [" + base.commits + ", " + (hi + 2) + "]";
    }
}
