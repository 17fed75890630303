/**
 * The failures a request on a partition answers with their wire error code
 * ({@link io.sluice.broker.errors.PartitionException}), worded one way for every replica
 * ({@link io.sluice.broker.errors.PartitionErrors}).
 */
package io.sluice.broker.errors;
