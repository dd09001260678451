package io.betree.internal.engine;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.MvccHorizon;
import io.betree.internal.tree.TreeConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The indexes of an open engine, by name and by id, and the next free id; makes their trees.
 * Thread-safe: every method is atomic. Creating an index is not logged here; the engine logs it
 * first (see {@link Engine#openIndex}).
 */
final class IndexRegistry {
    private final NodeCache cache;
    private final BlockFile file;
    private final MvccHorizon horizon;
    private final FailureListener failures;
    private final Map<String, StoredIndex> byName = new TreeMap<>();
    private final Map<Integer, StoredIndex> byId = new HashMap<>();
    private int nextId;

    IndexRegistry(NodeCache cache, BlockFile file, MvccHorizon horizon, FailureListener failures, int nextId) {
        this.cache = cache;
        this.file = file;
        this.horizon = horizon;
        this.failures = failures;
        this.nextId = nextId;
    }

    /** Registers an index stored at the last checkpoint. */
    synchronized void open(Catalog.Entry e) {
        register(new StoredIndex(e.id(), e.name(),
                BeTree.open(cache, file, configOf(e), horizon, failures, e.rootBlock())));
    }

    /** Creates an empty index under {@code id}, which must be new. */
    synchronized StoredIndex create(int id, String name, TreeConfig config) {
        StoredIndex index = new StoredIndex(id, name, BeTree.create(cache, file, config, horizon, failures));
        register(index);
        return index;
    }

    private void register(StoredIndex index) {
        byName.put(index.name(), index);
        byId.put(index.id(), index);
        nextId = Math.max(nextId, index.id() + 1);
    }

    synchronized StoredIndex byName(String name) {
        return byName.get(name);
    }

    synchronized StoredIndex byId(int id) {
        return byId.get(id);
    }

    /** Every index, in name order. */
    synchronized List<StoredIndex> all() {
        return new ArrayList<>(byName.values());
    }

    /** The id the next new index gets. */
    synchronized int nextId() {
        return nextId;
    }

    /** The settings a catalog entry or a logged creation records. */
    static TreeConfig configOf(Catalog.Entry e) {
        BlockCompressor codec = Compressors.create(e.codec(), e.level());
        return new TreeConfig(e.nodeSize(), e.basementSize(), e.fanout(), codec);
    }

    /** The catalog entry of {@code index} with its root at {@code rootBlock}. */
    static Catalog.Entry entryOf(StoredIndex index, long rootBlock) {
        return entryOf(index.id(), index.name(), rootBlock, index.tree().config());
    }

    static Catalog.Entry entryOf(int id, String name, long rootBlock, TreeConfig c) {
        return new Catalog.Entry(id, name, rootBlock, c.codec().name(), c.codec().level(), c.nodeSize(),
                c.basementSize(), c.fanout());
    }
}
