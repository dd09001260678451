/**
 * Block compression codecs for the storage engine.
 *
 * <p>{@link io.betree.compression.BlockCompressor} is the contract every codec implements;
 * {@link io.betree.compression.Compressors} looks codecs up by on-disk id or by name. Decompression
 * treats its input as untrusted: malformed blocks raise
 * {@link io.betree.compression.CompressionFormatException}, never another exception, a crash, an
 * allocation driven by sizes found in the input, or a hang.
 */
package io.betree.compression;
