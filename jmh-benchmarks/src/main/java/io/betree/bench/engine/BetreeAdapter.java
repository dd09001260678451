package io.betree.bench.engine;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * betree through its public API: one {@link Environment} whose off-heap node cache is the whole
 * budget, one {@link Index} per table with the chosen codec and default shape (4 MiB nodes, 64 KiB
 * basements, fanout 16; {@code -Dbench.betreeBasementSize=BYTES} sets another basement size). A batch is one {@link Transaction} per thread; its commit is logged and,
 * with {@code sync}, synced ({@link Durability#SYNC}); without it the log is written but synced only
 * at checkpoints ({@link Durability#NONE}), as RocksDB's unsynced WAL. Threads writing disjoint keys
 * never conflict (snapshot isolation conflicts only on the same key).
 */
public final class BetreeAdapter implements EngineAdapter {
    /** Engine name. */
    public static final String NAME = "betree";

    private Environment env;
    private EngineSettings settings;
    private Path dir;
    private final Map<String, Table> tables = new HashMap<>();
    private final ThreadLocal<Transaction> txn = new ThreadLocal<>();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean supports(Codec codec) {
        return true;
    }

    @Override
    public void open(Path dir, EngineSettings settings) {
        if (env != null) {
            throw new IllegalStateException("already open");
        }
        this.dir = dir;
        this.settings = settings;
        this.env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(settings.budgetBytes())
                .durability(settings.sync() ? Durability.SYNC : Durability.NONE));
    }

    @Override
    public Table table(String name) {
        return tables.computeIfAbsent(name,
                n -> new BetreeTable(env.openIndex(n, shape().codec(settings.codec())), this));
    }

    /**
     * The default index options, or, for shape experiments, the basement size of the system property
     * {@code bench.betreeBasementSize} (bytes).
     */
    private static IndexOptions shape() {
        String basement = System.getProperty("bench.betreeBasementSize");
        return basement == null ? IndexOptions.defaults() : IndexOptions.defaults().basementSize(Integer.parseInt(basement));
    }

    @Override
    public void commit() {
        Transaction t = txn.get();
        // Cleared first: a failed commit ends the transaction, and close() must not retry it
        // (its exception would hide the original one).
        txn.remove();
        if (t != null) {
            t.commit();
        }
    }

    private Transaction txn() {
        Transaction t = txn.get();
        if (t == null) {
            t = env.begin();
            txn.set(t);
        }
        return t;
    }

    @Override
    public void flush() {
        commit();
        env.checkpoint();
    }

    @Override
    public long diskBytes() {
        return DirectorySize.of(dir, null);
    }

    @Override
    public long writerWaitNanos() {
        return env == null ? -1 : env.writerWaitNanos();
    }

    @Override
    public void close() {
        if (env != null) {
            commit();
            tables.clear();
            env.close();
            env = null;
        }
    }

    private static final class BetreeTable implements Table {
        private final Index index;
        private final BetreeAdapter adapter;

        BetreeTable(Index index, BetreeAdapter adapter) {
            this.index = index;
            this.adapter = adapter;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            index.put(adapter.txn(), key, value);
        }

        @Override
        public byte[] get(byte[] key) {
            return index.get(key);
        }

        @Override
        public void delete(byte[] key) {
            index.delete(adapter.txn(), key);
        }

        @Override
        public long scan(byte[] from, byte[] to, long limit, ScanSink sink) {
            long n = 0;
            try (Cursor c = index.scan(from, to)) {
                while (n < limit && c.next()) {
                    sink.accept(c.key(), c.value());
                    n++;
                }
            }
            return n;
        }
    }
}
