"""W4 (issue 6): ~1.2 KB plain-JSON order events, no registry framing.

The documents are nested the way e-commerce order events usually are: an envelope (id, type,
time, source) around an order with a customer, a shipping and an optional billing address, a payment and
1-2 line items, each with tags. Every JSON Schema construct used is one Floe maps (docs/type-mapping.md, JSON
Schema): integer, number, string (formats date-time, date, uuid), boolean, objects with
properties, arrays with items, nullable as ["null", T]. No `required` list, so every column is
optional in Floe's table, and the peers' tables are created with exactly that schema
(`iceberg_schema()`), field for field.

`payloads()` is seeded: the same bytes on every run. The topic cycles through `distinct`
documents (as W1 does), so Parquet compresses it better than real data would.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import uuid

_STR = {"type": "string"}
_NSTR = {"type": ["null", "string"]}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_TS = {"type": "string", "format": "date-time"}


def _obj(**props) -> dict:
    return {"type": "object", "properties": props}


_ADDRESS = _obj(street=_STR, city=_STR, zip=_STR, country=_STR,
                lat=_NUM, lon=_NUM)

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "OrderEvent",
    **_obj(
        event_id={"type": "string", "format": "uuid"},
        event_type=_STR,
        event_time=_TS,
        source=_obj(app=_STR, version=_STR, ip=_STR, user_agent=_STR),
        order=_obj(
            order_id=_INT,
            status=_STR,
            channel=_STR,
            created_at=_TS,
            updated_at={"type": ["null", "string"], "format": "date-time"},
            delivery_date={"type": "string", "format": "date"},
            currency=_STR,
            subtotal=_NUM,
            shipping_cost=_NUM,
            tax=_NUM,
            discount={"type": ["null", "number"]},
            total=_NUM,
            coupon_code=_NSTR,
            customer=_obj(customer_id=_INT, name=_STR, email=_STR, phone=_NSTR,
                          loyalty_tier=_STR, vip={"type": "boolean"},
                          signup_date={"type": "string", "format": "date"}),
            shipping_address=_ADDRESS,
            billing_address={**_ADDRESS, "type": ["null", "object"]},
            payment=_obj(method=_STR, provider=_STR, authorized={"type": "boolean"},
                         card_last4=_NSTR, transaction_id=_STR),
            items={"type": "array", "items": _obj(
                sku=_STR, name=_STR, category=_STR, quantity=_INT, unit_price=_NUM,
                tags={"type": "array", "items": _STR})},
        ),
        metrics=_obj(page_views=_INT, session_seconds=_NUM, fraud_score=_NUM),
        labels={"type": "array", "items": _STR},
    ),
}

_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
          "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"]
_CITIES = [("Lisbon", "PT"), ("Porto", "PT"), ("Berlin", "DE"), ("Munich", "DE"),
           ("Lyon", "FR"), ("Austin", "US"), ("Denver", "US"), ("Osaka", "JP"), ("Leeds", "GB")]
_CATEGORIES = ["books", "garden", "kitchen", "toys", "outdoor", "electronics", "apparel"]


def _ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _address(rnd: random.Random) -> dict:
    city, country = rnd.choice(_CITIES)
    return {"street": f"{rnd.randrange(1, 999)} {rnd.choice(_WORDS).title()} "
                      f"{rnd.choice(['Street', 'Avenue', 'Road', 'Lane'])}",
            "city": city, "zip": f"{rnd.randrange(10**5):05d}",
            "country": country, "lat": round(rnd.uniform(-60, 70), 6),
            "lon": round(rnd.uniform(-150, 150), 6)}


def document(rnd: random.Random, i: int, base: dt.datetime) -> dict:
    created = base + dt.timedelta(microseconds=rnd.randrange(86_400 * 10**6))
    items = []
    for _ in range(rnd.randint(1, 2)):
        w = rnd.sample(_WORDS, 3)
        items.append({"sku": f"SKU-{rnd.randrange(10**7):07d}", "name": f"{w[0]} {w[1]} {w[2]}",
                      "category": rnd.choice(_CATEGORIES), "quantity": rnd.randint(1, 5),
                      "unit_price": round(rnd.uniform(1, 400), 2),
                      "tags": rnd.sample(_WORDS, rnd.randint(0, 2))})
    subtotal = round(sum(it["quantity"] * it["unit_price"] for it in items), 2)
    discount = None if rnd.random() < 0.7 else round(subtotal * rnd.choice([0.05, 0.1, 0.2]), 2)
    shipping = round(rnd.choice([0, 4.99, 9.99]), 2)
    tax = round(subtotal * 0.2, 2)
    name = f"{rnd.choice(_WORDS).title()} {rnd.choice(_WORDS).title()}"
    shipping_address = _address(rnd)
    return {
        "event_id": str(uuid.UUID(int=rnd.getrandbits(128), version=4)),
        "event_type": rnd.choice(["order_created", "order_paid", "order_shipped",
                                  "order_updated"]),
        "event_time": _ts(created + dt.timedelta(seconds=rnd.randrange(3600))),
        "source": {"app": "checkout-service", "version": f"3.{rnd.randrange(20)}.{rnd.randrange(9)}",
                   "ip": f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.{rnd.randrange(256)}",
                   "user_agent": rnd.choice([
                       "Firefox/128.0", "iOS/17.5 Safari/605.1", "okhttp/4.12.0"])},
        "order": {
            "order_id": 10**9 + i,
            "status": rnd.choice(["NEW", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"]),
            "channel": rnd.choice(["web", "ios", "android", "pos"]),
            "created_at": _ts(created),
            "updated_at": None if rnd.random() < 0.4 else _ts(created + dt.timedelta(minutes=rnd.randrange(600))),
            "delivery_date": (created.date() + dt.timedelta(days=rnd.randint(1, 9))).isoformat(),
            "currency": rnd.choice(["EUR", "USD", "GBP", "JPY"]),
            "subtotal": subtotal, "shipping_cost": shipping, "tax": tax, "discount": discount,
            "total": round(subtotal + shipping + tax - (discount or 0), 2),
            "coupon_code": None if discount is None else f"SAVE{rnd.randrange(100)}",
            "customer": {"customer_id": rnd.randrange(1 << 40), "name": name,
                         "email": name.lower().replace(" ", ".") + f"{rnd.randrange(1000)}@example.com",
                         "phone": None if rnd.random() < 0.5 else f"+351 9{rnd.randrange(10**8):08d}",
                         "loyalty_tier": rnd.choice(["none", "silver", "gold", "platinum"]),
                         "vip": rnd.random() < 0.05,
                         "signup_date": (base.date() - dt.timedelta(days=rnd.randrange(3000))).isoformat()},
            "shipping_address": shipping_address,
            "billing_address": None if rnd.random() < 0.85 else _address(rnd),
            "payment": {"method": rnd.choice(["card", "paypal", "klarna", "voucher"]),
                        "provider": rnd.choice(["adyen", "stripe", "braintree"]),
                        "authorized": rnd.random() < 0.97,
                        "card_last4": None if rnd.random() < 0.3 else f"{rnd.randrange(10**4):04d}",
                        "transaction_id": f"tx_{rnd.getrandbits(64):016x}"},
            "items": items,
        },
        "metrics": {"page_views": rnd.randrange(1, 60),
                    "session_seconds": round(rnd.uniform(5, 3600), 3),
                    "fraud_score": round(rnd.random(), 5)},
        "labels": rnd.sample(_WORDS, rnd.randint(0, 2)),
    }


def payloads(distinct: int = 8192) -> list[bytes]:
    """Seeded documents serialized compactly (no spaces), as Jackson and JSON.stringify
    write them."""
    rnd = random.Random(4242)
    base = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    return [json.dumps(document(rnd, i, base), separators=(",", ":")).encode() for i in range(distinct)]


def iceberg_schema():
    """The pyiceberg Schema Floe derives from SCHEMA (field ids in pre-order, as a new table
    gets them anyway), every field optional: the peers' tables are created with it."""
    from pyiceberg import types as T
    from pyiceberg.schema import Schema

    next_id = [0]

    def fid() -> int:
        next_id[0] += 1
        return next_id[0]

    def convert(s: dict):
        t = s["type"]
        if isinstance(t, list):
            t = next(x for x in t if x != "null")
        if t == "object":
            fields = [(name, fid(), sub) for name, sub in s["properties"].items()]
            return T.StructType(*[T.NestedField(i, name, convert(sub), required=False)
                                  for name, i, sub in fields])
        if t == "array":
            eid = fid()
            return T.ListType(eid, convert(s["items"]), element_required=False)
        if t == "integer":
            return T.LongType()
        if t == "number":
            return T.DoubleType()
        if t == "boolean":
            return T.BooleanType()
        fmt = s.get("format")
        return {"date-time": T.TimestamptzType(), "date": T.DateType()}.get(fmt, T.StringType())

    root = convert(SCHEMA)
    return Schema(*root.fields)


if __name__ == "__main__":
    import statistics
    p = payloads(2048)
    print(f"{len(p)} documents, mean {statistics.mean(map(len, p)):.0f} B, "
          f"min {min(map(len, p))}, max {max(map(len, p))}")
    print(p[0].decode())
    print(iceberg_schema())
