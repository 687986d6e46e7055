// A served model as a ScoreBackend: the client side of `advbo serve`'s HTTP API
// (docs/design.md, "Served models").
//
// Request  POST <url>  Content-Type: application/octet-stream
//          X-Advbo-Shape: N,C,H,W        body: N*C*H*W little-endian float32, NCHW, [0, 1]
//          X-Advbo-Purpose: QueryPurposeName (attack, shape_probe, selection, ...) whenever
//          the caller gives a QueryContext; with a session also X-Advbo-Session /
//          X-Advbo-Defense-Seed / X-Advbo-True-Class / X-Advbo-Target (a per-instance
//          defense on the server)
// Reply    200 application/json {"scores": [[...] | null, ...], "classes": K,
//          "detected": [bool...]?, "refused": [bool...]?}: N rows of the model's output; a
//          stateful detector's verdicts when one watches; a refused image's row is null and
//          marked in "refused" (a null row not so marked is an OutputError). The back end's
//          Answer() hands the verdicts on (Classifier::Answer); its Scores() throws
//          RefusedError when an image was refused.
//          4xx {"error": "..."}: the request was refused (shape, limits): not retried
//          5xx / 429 / no answer / timeout: retried, then TransportError
#pragma once

#include <memory>
#include <string>

#include "oracle/classifier.h"

namespace advbo::oracle {

/// The back end of `url` ("http://host[:port]/path" or https). No request is made here
/// (Classifier::FromBackend probes it). Throws ModelError on a malformed URL and
/// std::invalid_argument on bad options (timeout <= 0, retries < 0).
std::unique_ptr<ScoreBackend> MakeHttpBackend(const std::string& url, const HttpOptions& options);

}  // namespace advbo::oracle
