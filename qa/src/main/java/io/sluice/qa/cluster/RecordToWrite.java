package io.sluice.qa.cluster;

/** One record for {@code POST /v1/records}; {@code payloadJson} is a JSON value, {@code key} may be null. */
public record RecordToWrite(String key, String payloadJson)
{
    String toJson()
    {
        final StringBuilder json = new StringBuilder(64 + payloadJson.length()).append('{');
        if (key != null)
        {
            json.append("\"key\":").append(Json.write(key)).append(',');
        }
        return json.append("\"payload\":").append(payloadJson).append('}').toString();
    }
}
