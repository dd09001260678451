package io.betree.internal.engine;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.MvccHorizon;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.tree.UpdateFunctions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The indexes of an open engine, by name and by id, and the next free id; makes their trees.
 * Thread-safe: every method is atomic. Creating an index is not logged here; the engine logs it
 * first (see {@link Engine#openIndex}). A lock rather than a monitor: making a tree may wait for
 * the cache's evictor, and a virtual thread waiting here must not pin its carrier.
 */
final class IndexRegistry {
    private final NodeCache cache;
    private final BlockFile file;
    private final MvccHorizon horizon;
    private final FailureListener failures;
    private final Map<String, StoredIndex> byName = new TreeMap<>();
    private final Map<Integer, StoredIndex> byId = new HashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private int nextId;
    private final UpdateFunctions functions;

    IndexRegistry(NodeCache cache, BlockFile file, MvccHorizon horizon, FailureListener failures, int nextId,
            UpdateFunctions functions) {
        this.cache = cache;
        this.file = file;
        this.horizon = horizon;
        this.failures = failures;
        this.nextId = nextId;
        this.functions = functions;
    }

    /** Registers an index stored at the last checkpoint. */
    void open(Catalog.Entry e) {
        lock.lock();
        try {
            for (String f : e.functions()) {
                if (!functions.knows(f)) {
                    throw UpdateFunctions.unknownIn(e.name(), f);
                }
            }
            register(new StoredIndex(e.id(), e.name(),
                    BeTree.open(cache, file, configOf(e), horizon, failures, e.rootBlock(), functions), e.functions()));
        } finally {
            lock.unlock();
        }
    }

    /** Creates an empty index under {@code id}, which must be new. */
    StoredIndex create(int id, String name, TreeConfig config) {
        lock.lock();
        try {
            StoredIndex index = new StoredIndex(id, name, BeTree.create(cache, file, config, horizon, failures, functions),
                    List.of());
            register(index);
            return index;
        } finally {
            lock.unlock();
        }
    }

    private void register(StoredIndex index) {
        byName.put(index.name(), index);
        byId.put(index.id(), index);
        nextId = Math.max(nextId, index.id() + 1);
    }

    StoredIndex byName(String name) {
        lock.lock();
        try {
            return byName.get(name);
        } finally {
            lock.unlock();
        }
    }

    StoredIndex byId(int id) {
        lock.lock();
        try {
            return byId.get(id);
        } finally {
            lock.unlock();
        }
    }

    /** Every index, in name order. */
    List<StoredIndex> all() {
        lock.lock();
        try {
            return new ArrayList<>(byName.values());
        } finally {
            lock.unlock();
        }
    }

    /** Every index's tree, in name order: the order in which trees are paused (see {@link BeTree}). */
    List<BeTree> trees() {
        List<StoredIndex> all = all();
        List<BeTree> trees = new ArrayList<>(all.size());
        for (StoredIndex i : all) {
            trees.add(i.tree());
        }
        return trees;
    }

    /** The id the next new index gets. */
    int nextId() {
        lock.lock();
        try {
            return nextId;
        } finally {
            lock.unlock();
        }
    }

    /** The settings a catalog entry or a logged creation records. */
    static TreeConfig configOf(Catalog.Entry e) {
        BlockCompressor codec = Compressors.create(e.codec(), e.level());
        return new TreeConfig(e.nodeSize(), e.basementSize(), e.fanout(), codec);
    }

    /** The catalog entry of {@code index} with its root at {@code rootBlock}. */
    static Catalog.Entry entryOf(StoredIndex index, long rootBlock) {
        return entryOf(index.id(), index.name(), rootBlock, index.tree().config(),
                index.functions().stream().sorted().toList());
    }

    static Catalog.Entry entryOf(int id, String name, long rootBlock, TreeConfig c, List<String> functions) {
        return new Catalog.Entry(id, name, rootBlock, c.codec().name(), c.codec().level(), c.nodeSize(),
                c.basementSize(), c.fanout(), functions);
    }
}
