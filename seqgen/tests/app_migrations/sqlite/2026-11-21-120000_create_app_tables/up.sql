CREATE TABLE users (
    id   TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE menus (
    id    TEXT PRIMARY KEY NOT NULL,
    title TEXT NOT NULL
);
CREATE TABLE orders (
    order_no TEXT PRIMARY KEY NOT NULL,
    amount   BIGINT NOT NULL
);
