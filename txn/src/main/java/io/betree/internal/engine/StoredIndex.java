package io.betree.internal.engine;

import io.betree.internal.tree.BeTree;

/**
 * One index of an open engine: its stable id (what the log and the catalog record), its name and
 * its tree.
 *
 * @param id the id, unique in the environment and never reused
 * @param name the name
 * @param tree the tree holding the index's rows
 */
public record StoredIndex(int id, String name, BeTree tree) {
}
