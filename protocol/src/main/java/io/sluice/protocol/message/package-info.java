/**
 * Hand-written helpers over the generated codecs shared by broker and gateway:
 * {@link io.sluice.protocol.message.SbeMessages} checks untrusted bytes before a generated decoder reads
 * them, and {@link io.sluice.protocol.message.ErrorResponseWriter} encodes the one error answer.
 */
package io.sluice.protocol.message;
