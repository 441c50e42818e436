import React from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter, Routes, Route, useParams } from "react-router-dom";
import "./styles.css";
import Home from "./pages/Home.jsx";
import Menu from "./pages/Menu.jsx";
import About from "./pages/About.jsx";
import Contact from "./pages/Contact.jsx";
import Product1 from "./pages/Product1.jsx";
import Product2 from "./pages/Product2.jsx";
import Product3 from "./pages/Product3.jsx";
import Product4 from "./pages/Product4.jsx";
import Product5 from "./pages/Product5.jsx";
import Product6 from "./pages/Product6.jsx";
import Product7 from "./pages/Product7.jsx";
import Product8 from "./pages/Product8.jsx";

const PRODUCTS = { "1": Product1, "2": Product2, "3": Product3, "4": Product4, "5": Product5, "6": Product6, "7": Product7, "8": Product8 };

function NotFound() {
  return (
    <main className="page"><section className="page-title"><h1 className="h1">Page not found</h1></section></main>
  );
}

function Product() {
  const { id } = useParams();
  const Page = PRODUCTS[id] || NotFound;
  return <Page />;
}

createRoot(document.getElementById("root")).render(
  <BrowserRouter>
    <Routes>
      <Route path="/" element={<Home />} />
      <Route path="/menu" element={<Menu />} />
      <Route path="/product/:id" element={<Product />} />
      <Route path="/about" element={<About />} />
      <Route path="/contact" element={<Contact />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  </BrowserRouter>
);
