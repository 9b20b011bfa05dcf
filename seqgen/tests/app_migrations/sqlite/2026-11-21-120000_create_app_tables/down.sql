DROP TABLE orders;
DROP TABLE menus;
DROP TABLE users;
