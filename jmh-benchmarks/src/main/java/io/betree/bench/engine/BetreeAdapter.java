package io.betree.bench.engine;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * betree through its public API: one {@link Environment} whose off-heap node cache is the whole
 * budget, one {@link Index} per table with the chosen codec and default shape (4 MiB nodes, 64 KiB
 * basements, fanout 16). betree has no transactions and no write-ahead log yet: a batch is just
 * its puts and deletes, and a durable commit ({@code sync}) is a full checkpoint.
 */
public final class BetreeAdapter implements EngineAdapter {
    /** Engine name. */
    public static final String NAME = "betree";

    private Environment env;
    private EngineSettings settings;
    private Path dir;
    private final Map<String, Table> tables = new HashMap<>();

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
        this.env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(settings.budgetBytes()));
    }

    @Override
    public Table table(String name) {
        return tables.computeIfAbsent(name,
                n -> new BetreeTable(env.openIndex(n, IndexOptions.defaults().codec(settings.codec()))));
    }

    @Override
    public void commit() {
        if (settings.sync()) {
            env.checkpoint();
        }
    }

    @Override
    public void flush() {
        env.checkpoint();
    }

    @Override
    public long diskBytes() {
        return DirectorySize.of(dir, null);
    }

    @Override
    public void close() {
        if (env != null) {
            tables.clear();
            env.close();
            env = null;
        }
    }

    private static final class BetreeTable implements Table {
        private final Index index;

        BetreeTable(Index index) {
            this.index = index;
        }

        @Override
        public void put(byte[] key, byte[] value) {
            index.put(key, value);
        }

        @Override
        public byte[] get(byte[] key) {
            return index.get(key);
        }

        @Override
        public void delete(byte[] key) {
            index.delete(key);
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
