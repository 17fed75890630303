/**
 * A broker's part of a backup (issue 26): capturing a led partition's latest snapshot for a backup and uploading its
 * files to the backup store once the gateway committed the cut. It sits above {@code partition} and below
 * {@code command}.
 */
package io.sluice.broker.backup;
