/**
 * An open environment below the public API ({@link io.betree.internal.engine.Engine}): its indexes,
 * the catalog stored with each checkpoint, the checkpoint protocol
 * ({@link io.betree.internal.engine.CheckpointCoordinator}) and recovery from the log.
 */
package io.betree.internal.engine;
