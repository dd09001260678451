package io.betree.internal.engine;

import io.betree.internal.tree.BeTree;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One index of an open engine: its stable id (what the log and the catalog record), its name, its
 * tree, and the update functions its messages ever named.
 *
 * @param id the id, unique in the environment and never reused
 * @param name the name
 * @param tree the tree holding the index's rows
 * @param functions the names of the update functions any update or broadcast of the index ever
 *     named (thread-safe): the catalog keeps them, so that an environment whose tree may still
 *     hold such a message refuses to open without them ({@link Catalog})
 */
public record StoredIndex(int id, String name, BeTree tree, Set<String> functions) {

    /** An index whose messages named {@code functions} so far. */
    StoredIndex(int id, String name, BeTree tree, List<String> functions) {
        this(id, name, tree, newNameSet(functions));
    }

    private static Set<String> newNameSet(List<String> names) {
        Set<String> set = ConcurrentHashMap.newKeySet();
        set.addAll(names);
        return set;
    }

    /**
     * Records that a message of this index names function {@code name}, before it commits: the
     * next checkpoint's catalog, which holds every message committed before it, then holds the name.
     */
    public void noteFunction(String name) {
        functions.add(name);
    }
}
