/**
 * The failures the engine's layers report upward: one unchecked root,
 * {@link io.betree.internal.fault.BetreeException}, and a subclass per kind of failure. Each class
 * has a twin of the same name in the public package {@code io.betree}; the API translates one into
 * the other at its boundary, so the layers below it never depend on the public API and users never
 * see an internal type. A new kind of failure gets a class here and a twin there.
 */
package io.betree.internal.fault;
