package io.betree.systest;

import io.betree.Cursor;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.UpdateFunction;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;

/**
 * A deterministic multi-index workload for crash and fault tests. Transaction number {@code seq}
 * (1, 2, 3, ...) touches one to three rows of the primary index {@code accounts} (key: the 8-byte
 * id; value: {@link Row}, which records the seq of its last writer), keeps the secondary index
 * {@code by_owner} (key: 9-byte owner name + id; value: id) in step, sets the row {@code last}
 * of the index {@code meta} to {@code seq}, and adds one to its row {@code commits} with an update
 * function ({@link #ADD}), blind: after any committed prefix the two are equal, so an update lost,
 * torn from its transaction or applied twice by recovery shows. It also adds the row {@code seq}
 * (value 0, with a TTL far beyond any test) to the index {@code trail}; every 7th transaction
 * first adds one to every row of the trail by a broadcast ({@link Index#updateAll}), and every
 * 16th deletes the rows older than {@code seq - 10} by a range delete ({@link Index#deleteRange}),
 * so that the trail after any prefix is known exactly ({@link #expectedTrail}). What a transaction
 * does depends only on the seed, its seq and the state the previous transactions left, so a
 * {@link Model} can recompute the exact state after any number of commits, and a restarted process
 * can carry on where the data ends.
 */
final class AccountsWorkload {
    static final String ACCOUNTS = "accounts";
    static final String BY_OWNER = "by_owner";
    static final String META = "meta";
    static final String TRAIL = "trail";
    static final byte[] LAST = "last".getBytes(StandardCharsets.US_ASCII);
    static final byte[] COMMITS = "commits".getBytes(StandardCharsets.US_ASCII);
    /** Adds an 8-byte count to an 8-byte value, an absent one counting as 0. */
    static final UpdateFunction ADD = (key, old, argument) -> ByteBuffer.allocate(8)
            .putLong((old == null ? 0 : ByteBuffer.wrap(old).getLong()) + ByteBuffer.wrap(argument).getLong()).array();
    static final int OWNER_BYTES = 9;

    final long seed;
    final int ids;
    final int owners;
    final int maxPayload;

    AccountsWorkload(long seed, int ids, int owners, int maxPayload) {
        this.seed = seed;
        this.ids = ids;
        this.owners = owners;
        this.maxPayload = maxPayload;
    }

    /** Small nodes and basements, so that a few thousand rows make a tree of several levels. */
    static IndexOptions shape() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    /** Options for crash tests: smallest cache, 1 MiB log segments (so segments roll and are deleted). */
    static EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20).logSegmentBytes(1L << 20)
                .updateFunction("add", ADD);
    }

    /** The workload's four indexes in one environment. */
    record Indexes(Index accounts, Index byOwner, Index meta, Index trail) {
    }

    static Indexes open(Environment env) {
        return new Indexes(env.openIndex(ACCOUNTS, shape()), env.openIndex(BY_OWNER, shape()), env.openIndex(META, shape()),
                env.openIndex(TRAIL, shape()));
    }

    /**
     * The trail after {@code commits} transactions: row {@code s} is there unless the range delete
     * of a later transaction {@code t} (a multiple of 16) dropped it ({@code s < t - 10}), and counts
     * the broadcasts of the transactions after it (multiples of 7).
     */
    static TreeMap<Long, Long> expectedTrail(long commits) {
        TreeMap<Long, Long> trail = new TreeMap<>();
        long lastDelete = commits - commits % 16;
        for (long s = lastDelete == 0 ? 1 : Math.max(1, lastDelete - 10); s <= commits; s++) {
            trail.put(s, commits / 7 - s / 7);
        }
        return trail;
    }

    // ------------------------------------------------------------------ encodings

    static byte[] idKey(long id) {
        return ByteBuffer.allocate(8).putLong(id).array();
    }

    static long idOf(byte[] key) {
        if (key.length != 8) {
            throw new AssertionError("primary key of " + key.length + " bytes: " + Arrays.toString(key));
        }
        return ByteBuffer.wrap(key).getLong();
    }

    static byte[] ownerName(int owner) {
        return String.format("owner-%03d", owner).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] ownerKey(int owner, long id) {
        return ByteBuffer.allocate(OWNER_BYTES + 8).put(ownerName(owner)).putLong(id).array();
    }

    static byte[] seqBytes(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    /** A primary row: the seq of the transaction that wrote it last, owner, version, payload. */
    record Row(long seq, int owner, int version, byte[] payload) {
        byte[] encode() {
            return ByteBuffer.allocate(16 + payload.length).putLong(seq).putInt(owner).putInt(version).put(payload)
                    .array();
        }

        static Row decode(byte[] b) {
            if (b.length < 16) {
                throw new AssertionError("row of " + b.length + " bytes");
            }
            ByteBuffer buf = ByteBuffer.wrap(b);
            long seq = buf.getLong();
            int owner = buf.getInt();
            int version = buf.getInt();
            byte[] payload = new byte[buf.remaining()];
            buf.get(payload);
            return new Row(seq, owner, version, payload);
        }
    }

    static byte[] payload(long seq, long id, int length) {
        byte[] p = new byte[length];
        Random r = new Random(seq * 1_000_003L + id);
        for (int i = 0; i < length; i++) {
            // Half random, half text: compressible like real rows, but never all the same.
            p[i] = (byte) ((i & 1) == 0 ? r.nextInt() : 'a' + (i + seq) % 23);
        }
        return p;
    }

    // ------------------------------------------------------------------ the transactions

    /** One row touched by a transaction; all random draws are made up front, whatever the state. */
    private record Step(long id, int roll, int owner, int payloadLength) {
    }

    private List<Step> plan(long seq) {
        Random r = new Random(seed ^ (seq * 0x9E3779B97F4A7C15L));
        int n = 1 + r.nextInt(3);
        List<Step> steps = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            steps.add(new Step(r.nextInt(ids), r.nextInt(100), r.nextInt(owners), r.nextInt(maxPayload + 1)));
        }
        return steps;
    }

    /** The row after the step (null: deleted), given the row before (null: absent). */
    private static Row decide(Row old, Step s, long seq) {
        byte[] p = payload(seq, s.id(), s.payloadLength());
        if (old == null) {
            return new Row(seq, s.owner(), 1, p);
        }
        if (s.roll() < 25) {
            return null;
        }
        return new Row(seq, s.roll() < 60 ? s.owner() : old.owner(), old.version() + 1, p);
    }

    /** Performs transaction {@code seq} in {@code txn} (without committing it). */
    void apply(Transaction txn, Indexes ix, long seq) {
        if (seq % 7 == 0) {
            ix.trail().updateAll(txn, "add", seqBytes(1));
        }
        if (seq % 16 == 0) {
            ix.trail().deleteRange(txn, null, seqBytes(seq - 10));
        }
        // With a TTL far beyond any test: the expiring put's message and row forms go through the
        // crash tests too, and the broadcasts must keep the expiry.
        ix.trail().put(txn, seqBytes(seq), seqBytes(0), java.time.Duration.ofDays(3650));
        for (Step s : plan(seq)) {
            byte[] key = idKey(s.id());
            byte[] current = ix.accounts().get(txn, key);
            Row old = current == null ? null : Row.decode(current);
            Row next = decide(old, s, seq);
            if (old != null && (next == null || next.owner() != old.owner())) {
                ix.byOwner().delete(txn, ownerKey(old.owner(), s.id()));
            }
            if (next == null) {
                ix.accounts().delete(txn, key);
            } else {
                ix.accounts().put(txn, key, next.encode());
                ix.byOwner().put(txn, ownerKey(next.owner(), s.id()), key);
            }
        }
        ix.meta().put(txn, LAST, seqBytes(seq));
        ix.meta().update(txn, COMMITS, "add", seqBytes(1));
    }

    /** Runs and commits transaction {@code seq}. */
    void commit(Environment env, Indexes ix, long seq) {
        try (Transaction txn = env.begin()) {
            apply(txn, ix, seq);
            txn.commit();
        }
    }

    /** The seq of the last transaction the environment holds (0: none). */
    static long lastSeq(Environment env, Indexes ix) {
        byte[] v = ix.meta().get(LAST);
        return v == null ? 0 : ByteBuffer.wrap(v).getLong();
    }

    // ------------------------------------------------------------------ the model

    /** The expected state after {@link #commits} transactions. */
    final class Model {
        final TreeMap<Long, Row> rows = new TreeMap<>();
        long commits;

        Model copy() {
            Model m = new Model();
            m.rows.putAll(rows);
            m.commits = commits;
            return m;
        }

        /** Applies the next transaction. */
        void advance() {
            long seq = commits + 1;
            for (Step s : plan(seq)) {
                Row next = decide(rows.get(s.id()), s, seq);
                if (next == null) {
                    rows.remove(s.id());
                } else {
                    rows.put(s.id(), next);
                }
            }
            commits = seq;
        }

        Model advancedTo(long k) {
            if (k < commits) {
                throw new IllegalArgumentException("cannot go back from " + commits + " to " + k);
            }
            Model m = copy();
            while (m.commits < k) {
                m.advance();
            }
            return m;
        }

        /** Null if {@code s} holds exactly this state, else a description of the first differences. */
        String differences(Stored s) {
            return differences(s, true);
        }

        /** As {@link #differences(Stored)}, comparing the primary rows only unless {@code meta}. */
        String differences(Stored s, boolean meta) {
            StringBuilder sb = new StringBuilder();
            if (meta && s.last != commits) {
                sb.append("meta.last is ").append(s.last).append(", expected ").append(commits).append("; ");
            }
            if (meta && !s.trail.equals(expectedTrail(commits))) {
                sb.append("the trail (row: broadcasts met) is ").append(s.trail).append(", expected ")
                        .append(expectedTrail(commits)).append("; ");
            }
            int shown = 0;
            TreeMap<Long, Object> all = new TreeMap<>();
            rows.keySet().forEach(k -> all.put(k, k));
            s.rows.keySet().forEach(k -> all.put(k, k));
            for (Long id : all.keySet()) {
                Row want = rows.get(id);
                Row got = s.rows.get(id);
                if (!sameRow(want, got)) {
                    if (shown++ < 8) {
                        sb.append("id ").append(id).append(": expected ").append(describe(want)).append(", found ")
                                .append(describe(got)).append("; ");
                    }
                }
            }
            if (shown > 8) {
                sb.append(shown - 8).append(" more rows differ; ");
            }
            return sb.length() == 0 ? null : sb.toString();
        }
    }

    Model emptyModel() {
        return new Model();
    }

    static boolean sameRow(Row a, Row b) {
        if (a == null || b == null) {
            return a == b;
        }
        return a.seq() == b.seq() && a.owner() == b.owner() && a.version() == b.version()
                && Arrays.equals(a.payload(), b.payload());
    }

    static String describe(Row r) {
        return r == null ? "(absent)"
                : "[seq " + r.seq() + ", owner " + r.owner() + ", version " + r.version() + ", " + r.payload().length
                        + " payload bytes]";
    }

    // ------------------------------------------------------------------ reading back

    /** What an environment holds, read in one snapshot. */
    static final class Stored {
        final TreeMap<Long, Row> rows = new TreeMap<>();
        final TreeMap<Long, Long> trail = new TreeMap<>();
        long last;
    }

    /**
     * Reads the whole state in one transaction, checking on the way that gets agree with scans and
     * that {@code by_owner} holds exactly one entry per primary row, under the row's owner, and
     * nothing else.
     *
     * @throws AssertionError naming the inconsistency
     */
    Stored read(Environment env, Indexes ix) {
        Stored s = new Stored();
        try (Transaction txn = env.begin()) {
            try (Cursor c = ix.accounts().scan(txn, null, null)) {
                while (c.next()) {
                    long id = idOf(c.key());
                    if (s.rows.put(id, Row.decode(c.value())) != null) {
                        throw new AssertionError("accounts scan returned id " + id + " twice");
                    }
                }
            }
            for (long id = 0; id < ids; id++) {
                byte[] v = ix.accounts().get(txn, idKey(id));
                Row scanned = s.rows.get(id);
                if (!sameRow(scanned, v == null ? null : Row.decode(v))) {
                    throw new AssertionError("accounts id " + id + ": scan found " + describe(scanned) + " but get "
                            + describe(v == null ? null : Row.decode(v)));
                }
            }
            TreeMap<Long, Integer> secondary = new TreeMap<>();
            try (Cursor c = ix.byOwner().scan(txn, null, null)) {
                while (c.next()) {
                    byte[] k = c.key();
                    if (k.length != OWNER_BYTES + 8) {
                        throw new AssertionError("by_owner key of " + k.length + " bytes");
                    }
                    String name = new String(k, 0, OWNER_BYTES, StandardCharsets.US_ASCII);
                    int owner = Integer.parseInt(name.substring("owner-".length()));
                    long id = ByteBuffer.wrap(k, OWNER_BYTES, 8).getLong();
                    if (idOf(c.value()) != id) {
                        throw new AssertionError("by_owner entry " + name + "/" + id + " points at id " + idOf(c.value()));
                    }
                    Row row = s.rows.get(id);
                    if (row == null) {
                        throw new AssertionError("by_owner entry " + name + "/" + id + " has no primary row");
                    }
                    if (row.owner() != owner) {
                        throw new AssertionError("by_owner entry " + name + "/" + id + " but the row's owner is "
                                + row.owner());
                    }
                    if (secondary.put(id, owner) != null) {
                        throw new AssertionError("two by_owner entries for id " + id);
                    }
                    byte[] viaGet = ix.byOwner().get(txn, k);
                    if (viaGet == null || idOf(viaGet) != id) {
                        throw new AssertionError("by_owner get of " + name + "/" + id + " disagrees with the scan");
                    }
                }
            }
            for (Map.Entry<Long, Row> e : s.rows.entrySet()) {
                if (!secondary.containsKey(e.getKey())) {
                    throw new AssertionError("primary row " + e.getKey() + " (owner " + e.getValue().owner()
                            + ") has no by_owner entry");
                }
            }
            byte[] last = ix.meta().get(txn, LAST);
            s.last = last == null ? 0 : ByteBuffer.wrap(last).getLong();
            byte[] commits = ix.meta().get(txn, COMMITS);
            long counted = commits == null ? 0 : ByteBuffer.wrap(commits).getLong();
            if (counted != s.last) {
                throw new AssertionError("meta.commits, one update per commit, is " + counted + " where meta.last is "
                        + s.last);
            }
            int metaRows = 0;
            try (Cursor c = ix.meta().scan(txn, null, null)) {
                while (c.next()) {
                    metaRows++;
                    boolean isLast = Arrays.equals(LAST, c.key()) && Arrays.equals(last, c.value());
                    boolean isCommits = Arrays.equals(COMMITS, c.key()) && Arrays.equals(commits, c.value());
                    if (!isLast && !isCommits) {
                        throw new AssertionError("unexpected meta row " + new String(c.key(), StandardCharsets.UTF_8));
                    }
                }
            }
            int expectedRows = (last == null ? 0 : 1) + (commits == null ? 0 : 1);
            if (metaRows != expectedRows) {
                throw new AssertionError("meta scan found " + metaRows + " rows, gets say " + expectedRows);
            }
            try (Cursor c = ix.trail().scan(txn, null, null)) {
                while (c.next()) {
                    long count = ByteBuffer.wrap(c.value()).getLong();
                    s.trail.put(ByteBuffer.wrap(c.key()).getLong(), count);
                    if (!Arrays.equals(c.value(), ix.trail().get(txn, c.key()))) {
                        throw new AssertionError("trail row " + ByteBuffer.wrap(c.key()).getLong() + ": get disagrees with the scan");
                    }
                }
            }
        }
        return s;
    }

    /**
     * Checks that the environment holds exactly the state after {@code k} commits for some {@code k}
     * in {@code [lo, hi]}, and returns that model. {@code base} is a model at or below {@code lo}.
     */
    Model expectPrefix(Environment env, Indexes ix, Model base, long lo, long hi, String context) {
        Stored s = read(env, ix);
        Objects.requireNonNull(base);
        if (s.last < lo || s.last > hi) {
            throw new AssertionError(context + ": the data ends at commit " + s.last + ", expected one in [" + lo + ", "
                    + hi + "]" + (s.last < lo ? " (acknowledged commits were lost)" : ""));
        }
        if (s.last < base.commits) {
            throw new AssertionError(context + ": the data ends at commit " + s.last + ", before the verified "
                    + base.commits);
        }
        Model m = base.advancedTo(s.last);
        String diff = m.differences(s);
        if (diff != null) {
            // Which prefix, if any, does the data match? Helps tell a partial commit from a lost one.
            String match = "none in [" + base.commits + ", " + (hi + 2) + "]";
            Model probe = base.copy();
            while (probe.commits <= hi + 2) {
                if (probe.differences(s, false) == null) {
                    match = Long.toString(probe.commits);
                    break;
                }
                probe.advance();
            }
            throw new AssertionError(context + ": meta.last says " + s.last
                    + " but the rows are not the state after that many commits (not a committed prefix: a partial "
                    + "or lost transaction); rows match the state after commit " + match + ". Differences: " + diff);
        }
        return m;
    }
}
