package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;

/**
 * Shape parameters of one tree.
 *
 * @param nodeSize bytes at which an internal node flushes and a leaf splits
 * @param basementSize bytes at which a basement splits
 * @param fanout children at which an internal node splits
 * @param codec compressor for the tree's blocks
 */
public record TreeConfig(int nodeSize, int basementSize, int fanout, BlockCompressor codec) {
}
